//! Accounts: put, read, list, activity, block, ban.

use holdfast_core::AccountId;
use holdfast_store::{AccountFilter, AccountPage, AccountView, Banned, PutAccount, StoreError};

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

    /// [`Engine::set_blocked`] with the operator's reason (event `operator.blocked` /
    /// `operator.unblocked`, when the state changes).
    pub async fn set_blocked_because(
        &self,
        account: &AccountId,
        blocked: bool,
        reason: Option<&str>,
    ) -> Result<AccountView, StoreError> {
        self.store
            .set_blocked_because(account, blocked, reason)
            .await
    }

    /// Accounts by id, plan, status and id prefix, in id order, by cursor.
    pub async fn list_accounts(&self, filter: &AccountFilter) -> Result<AccountPage, StoreError> {
        self.store.list_accounts(filter).await
    }

    /// Bans an account: its queued jobs canceled (holds released), new submits and
    /// debits refused (`account_banned`); running jobs may end. Banning again keeps the
    /// first time.
    pub async fn ban(&self, account: &AccountId, reason: &str) -> Result<Banned, StoreError> {
        self.store.ban(account, reason).await
    }

    /// Lifts a ban.
    pub async fn unban(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        self.store.unban(account).await
    }
}
