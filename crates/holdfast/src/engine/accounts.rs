//! Accounts: put, read, activity, block.

use holdfast_core::AccountId;
use holdfast_store::{AccountView, PutAccount, StoreError};

use super::Engine;

impl Engine {
    /// Creates or updates an account. Returns the account and whether it was created.
    pub async fn put_account(
        &self,
        account: &AccountId,
        req: &PutAccount,
    ) -> Result<(AccountView, bool), StoreError> {
        self.store.put_account(account, req).await
    }

    /// An account with every pocket as it is effective now (`account_not_found` if none).
    pub async fn get_account(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        self.store.get_account(account).await
    }

    /// Records activity: applies due refills and stamps `last_active_at`.
    pub async fn activity(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        self.store.activity(account).await
    }

    /// Blocks (`true`) or unblocks an account. Blocking again keeps the first time.
    pub async fn set_blocked(
        &self,
        account: &AccountId,
        blocked: bool,
    ) -> Result<AccountView, StoreError> {
        self.store.set_blocked(account, blocked).await
    }
}
