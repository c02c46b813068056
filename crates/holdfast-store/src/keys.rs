//! API keys: stored only as SHA-256 hashes, looked up by hash.

use sha2::{Digest, Sha256};

use crate::args;
use crate::db::Sql;
use crate::error::StoreError;
use crate::model::ApiKey;
use crate::store::{NOW, Store};
use crate::{in_read_tx, in_write_tx};

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
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            tx.execute(
                Sql::both("INSERT INTO api_keys (key_id, role, key_hash, created_at) VALUES ($1, $2, $3, $4)"),
                args![id.as_str(), role, hash.as_str(), now],
            )
            .await?;
            Ok(id.clone())
        })
    }

    /// The role of an unrevoked key with this hash.
    pub async fn role_of_key_hash(&self, hash: &str) -> Result<Option<String>, StoreError> {
        in_read_tx!(self, |tx| async {
            let row = tx
                .fetch_optional(
                    Sql::both(
                        "SELECT role FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
                    ),
                    args![hash],
                )
                .await?;
            row.map(|r| r.text("role")).transpose()
        })
    }

    pub async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        in_read_tx!(self, |tx| async {
            let rows = tx
                .fetch_all(Sql::both("SELECT key_id, role, created_at, revoked_at FROM api_keys ORDER BY created_at"), args![])
                .await?;
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
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let n = tx
                .execute(
                    Sql::both("UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL"),
                    args![key_id, now],
                )
                .await?;
            Ok(n == 1)
        })
    }

    /// How many live keys exist.
    pub async fn live_key_count(&self) -> Result<i64, StoreError> {
        in_read_tx!(self, |tx| async {
            tx.fetch_one(
                Sql::both("SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL"),
                args![],
            )
            .await?
            .int("n")
        })
    }
}
