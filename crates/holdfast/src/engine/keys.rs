//! API keys: only a key's hash is stored ([`crate::key_hash`]); roles are plain names
//! (`service`, `worker`, `admin`) that the HTTP layer gives meaning to.

use holdfast_store::{ApiKey, StoreError};

use super::Engine;

impl Engine {
    /// Stores a new key's hash with its role under a fresh id; returns the id.
    pub async fn create_key(&self, role: &str, key: &str) -> Result<String, StoreError> {
        self.store.create_key(role, key).await
    }

    /// Every key, revoked ones included (ids, roles and times; never the keys).
    pub async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        self.store.list_keys().await
    }

    /// Revokes a key by id; `false` when no live key has that id.
    pub async fn revoke_key(&self, key_id: &str) -> Result<bool, StoreError> {
        self.store.revoke_key(key_id).await
    }

    /// The role of the live (unrevoked) key with this hash.
    pub async fn role_of_key_hash(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.store.role_of_key_hash(hash).await
    }

    /// The role and id of the live key with this hash, if any.
    pub async fn key_of_hash(&self, hash: &str) -> Result<Option<(String, String)>, StoreError> {
        self.store.key_of_hash(hash).await
    }

    /// How many live keys exist.
    pub async fn live_key_count(&self) -> Result<i64, StoreError> {
        self.store.live_key_count().await
    }
}
