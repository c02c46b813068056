//! API keys: stored only as SHA-256 hashes, looked up by hash.

use sha2::{Digest, Sha256};

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::ApiKey;
use crate::store::Store;
use crate::units::writes::emit_operator;
use crate::{in_read_tx, in_write_tx, params, statement};

static CREATE_API_KEY: Stmt = statement!(shared "create_api_key");
static ROLE_OF_API_KEY_HASH: Stmt = statement!(shared "role_of_api_key_hash");
static LIST_API_KEYS: Stmt = statement!(shared "list_api_keys");
static REVOKE_API_KEY: Stmt = statement!(shared "revoke_api_key");
static COUNT_LIVE_API_KEYS: Stmt = statement!(shared "count_live_api_keys");

/// The hex SHA-256 of a key, as stored.
pub fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

impl Store {
    /// Stores a new key's hash under a fresh id; returns the id.
    pub async fn create_key(&self, role: &str, key: &str) -> Result<String, StoreError> {
        let id = format!("key_{}", uuid::Uuid::now_v7().simple());
        let hash = key_hash(key);
        in_write_tx!(self, |tx| async {
            let now = crate::store::now(tx).await?;
            let key = params! {
                key_id: id.as_str(),
                role: role,
                key_hash: hash.as_str(),
                created_at_micros: now,
            };
            tx.exec(&CREATE_API_KEY, key).await?;
            let data = serde_json::json!({ "key_id": id, "role": role });
            emit_operator(tx, "key_created", "", data, None, now).await?;
            Ok(id.clone())
        })
    }

    /// The role of an unrevoked key with this hash.
    pub async fn role_of_key_hash(&self, hash: &str) -> Result<Option<String>, StoreError> {
        Ok(self.key_of_hash(hash).await?.map(|(role, _)| role))
    }

    /// The role and id of the live key with this hash, if any.
    pub async fn key_of_hash(&self, hash: &str) -> Result<Option<(String, String)>, StoreError> {
        in_read_tx!(self, |tx| async {
            let row = tx
                .maybe_row(&ROLE_OF_API_KEY_HASH, params! { key_hash: hash })
                .await?;
            row.map(|r| Ok((r.text("role")?, r.text("key_id")?)))
                .transpose()
        })
    }

    pub async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        in_read_tx!(self, |tx| async {
            let rows = tx.rows(&LIST_API_KEYS, params! {}).await?;
            rows.iter()
                .map(|r| {
                    Ok(ApiKey {
                        key_id: r.text("key_id")?,
                        role: r.text("role")?,
                        created_at: r.int("created_at")?,
                        revoked_at: r.opt_int("revoked_at")?,
                    })
                })
                .collect()
        })
    }

    /// Revokes a key; `false` when no live key has that id.
    pub async fn revoke_key(&self, key_id: &str) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let now = crate::store::now(tx).await?;
            let n = tx
                .exec(
                    &REVOKE_API_KEY,
                    params! { key_id: key_id, revoked_at_micros: now },
                )
                .await?;
            if n == 1 {
                let data = serde_json::json!({ "key_id": key_id });
                emit_operator(tx, "key_revoked", "", data, None, now).await?;
            }
            Ok(n == 1)
        })
    }

    /// How many live keys exist.
    pub async fn live_key_count(&self) -> Result<i64, StoreError> {
        in_read_tx!(self, |tx| async {
            tx.row(&COUNT_LIVE_API_KEYS, params! {}).await?.int("n")
        })
    }
}
