//! Accounts and their allowance pockets: put, read, activity, block.

use holdfast_core::decide::{self, AccountSnapshot, NewPocket, Recharge, SpendPolicy, Timestamp};
use holdfast_core::{AccountId, Refusal};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::AccountView;
use crate::store::{Store, now};
use crate::units::account_state::{AccountState, lock_account, read_account};
use crate::units::writes::{EntryFacts, apply_refills, emit_operator, touch_account, write_ledger};
use crate::{in_read_tx, in_write_tx, params, statement};

pub use crate::units::money::MAX_PAGE;

static INSERT_ACCOUNT: Stmt = statement!(shared "insert_account");
static UPDATE_ACCOUNT_PLAN: Stmt = statement!(shared "update_account_plan");
static INSERT_ALLOWANCE: Stmt = statement!(shared "insert_allowance");
static STAMP_ACTIVITY: Stmt = statement!(shared "stamp_activity");
static SET_BLOCKED: Stmt = statement!(shared "set_blocked");
static SET_RECHARGE: Stmt = statement!(shared "set_recharge");
static SET_SPEND_POLICY: Stmt = statement!(shared "set_spend_policy");

/// A PUT of an account.
#[derive(Debug, Clone)]
pub struct PutAccount {
    pub plan: String,
    pub plan_until: Option<Timestamp>,
    pub max_concurrent_jobs: Option<i64>,
    /// The auto-recharge: `None` leaves it as it is, `Some(None)` removes it.
    pub recharge: Option<Option<Recharge>>,
    /// The account's own rule of spending, in place of its plan's: `None` leaves it as it
    /// is, `Some(None)` removes it (the plan's applies again).
    pub spend: Option<Option<SpendPolicy>>,
}

impl Store {
    /// Creates or updates an account. Returns the account and whether it was created.
    pub async fn put_account(
        &self,
        account: &AccountId,
        req: &PutAccount,
    ) -> Result<(AccountView, bool), StoreError> {
        self.card().check_plan(&req.plan)?;
        decide::check_concurrency_override(req.max_concurrent_jobs)?;
        if let Some(Some(r)) = req.recharge {
            r.check()?;
        }
        if let Some(Some(policy)) = &req.spend {
            (policy.check()).map_err(|e| Refusal::InvalidRequest(format!("spend.{e}")))?;
        }
        in_write_tx!(self, |tx| self.put_account_in(tx, account, req))
    }

    async fn put_account_in(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        req: &PutAccount,
    ) -> Result<(AccountView, bool), StoreError> {
        let account_id = account.as_str();
        let (plan, plan_until) = (req.plan.as_str(), req.plan_until);
        let max_concurrent_jobs = req.max_concurrent_jobs;
        let now = now(tx).await?;
        let params = params! {
            account_id: account_id, plan: plan, plan_until: plan_until,
            max_concurrent_jobs: max_concurrent_jobs, now: now,
        };
        let inserted = tx.exec(&INSERT_ACCOUNT, params).await? == 1;
        let mut state = lock_account(tx, self.card(), account, &[]).await?;
        let snap = &mut state.snap;
        if !inserted {
            if snap.plan != req.plan {
                let data = serde_json::json!({ "from": snap.plan, "to": req.plan });
                emit_operator(tx, "plan_changed", account_id, data, None, now).await?;
            }
            let params = params! {
                account_id: account_id, plan: plan, plan_until: plan_until,
                max_concurrent_jobs: max_concurrent_jobs,
            };
            tx.exec(&UPDATE_ACCOUNT_PLAN, params).await?;
            snap.plan = req.plan.clone();
            snap.plan_until = req.plan_until;
            snap.max_concurrent_jobs = req.max_concurrent_jobs;
        }
        if let Some(recharge) = req.recharge {
            let params = params! {
                account_id: account_id,
                below: recharge.map(|r| r.below.0), amount: recharge.map(|r| r.amount.0),
            };
            tx.exec(&SET_RECHARGE, params).await?;
            snap.recharge = recharge;
        }
        if let Some(policy) = &req.spend
            && *policy != snap.spend.policy
        {
            let data = serde_json::json!({ "from": snap.spend.policy, "to": policy });
            emit_operator(tx, "spend_rule_changed", account_id, data, None, now).await?;
            let text = policy.as_ref().map(serde_json::to_string).transpose();
            let text = text.map_err(|e| StoreError::Corrupt(format!("spend policy: {e}")))?;
            let params = params! { account_id: account_id, policy: text };
            tx.exec(&SET_SPEND_POLICY, params).await?;
            snap.spend.policy = policy.clone();
        }
        self.add_missing_pockets(tx, account, snap, inserted)
            .await?;
        // A rule that came into force counts what was spent in its period already.
        state.read_for_rules(tx, self.card()).await?;
        state.write_changed_marks(tx).await?;
        Ok((state.view(self.card())?, inserted))
    }

    /// Adds the pockets of the account's plan it lacks, as
    /// [`AccountSnapshot::missing_pockets`] decides them (a refill entry explains each
    /// that starts above zero).
    async fn add_missing_pockets(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
        new_account: bool,
    ) -> Result<(), StoreError> {
        let missing = snap.missing_pockets(self.card(), new_account);
        for NewPocket { pocket, remaining } in &missing {
            let params = params! {
                account_id: account.as_str(), pocket: pocket.as_str(), remaining: *remaining,
                now: snap.now,
            };
            tx.exec(&INSERT_ALLOWANCE, params).await?;
            if *remaining > 0 {
                let facts = EntryFacts {
                    pocket,
                    delta: *remaining,
                    kind: "refill",
                    amount_after: *remaining,
                    available_after: Some(*remaining),
                    buffer: None,
                    reference: None,
                };
                write_ledger(tx, account.as_str(), snap.now, facts).await?;
            }
            let fresh = holdfast_core::AllowancePocket {
                remaining: *remaining,
                held: 0,
                cycle_started_at: snap.now,
            };
            snap.allowances.insert(pocket.clone(), fresh);
        }
        if !missing.is_empty() {
            touch_account(tx, account.as_str()).await?;
        }
        Ok(())
    }

    pub async fn get_account(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        in_read_tx!(self, |tx| async {
            read_account(tx, self.card(), account)
                .await?
                .view(self.card())
        })
    }

    /// Records activity: applies due refills and stamps `last_active_at`.
    pub async fn activity(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            self.record_activity(tx, account, &mut state.snap).await?;
            state.view(self.card())
        })
    }

    /// Account activity (a submit, whatever its outcome, or the activity call): applies
    /// the due refills and stamps `last_active_at`, in the caller's transaction.
    pub(crate) async fn record_activity(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
    ) -> Result<(), StoreError> {
        let refills = snap.due_refills(self.card());
        apply_refills(tx, account, snap, &refills).await?;
        self.stamp_activity(tx, account, snap).await
    }

    /// Stamps `last_active_at`, in the caller's transaction.
    pub(crate) async fn stamp_activity(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
    ) -> Result<(), StoreError> {
        let params = params! { account_id: account.as_str(), now: snap.now };
        tx.exec(&STAMP_ACTIVITY, params).await?;
        snap.last_active_at = Some(snap.now);
        Ok(())
    }

    /// Blocks (`true`) or unblocks an account. Blocking again keeps the first time.
    pub async fn set_blocked(
        &self,
        account: &AccountId,
        blocked: bool,
    ) -> Result<AccountView, StoreError> {
        self.set_blocked_because(account, blocked, None).await
    }

    /// [`Store::set_blocked`] with the operator's reason, recorded on the event
    /// `operator.blocked` / `operator.unblocked` (emitted when the state changes).
    pub async fn set_blocked_because(
        &self,
        account: &AccountId,
        blocked: bool,
        reason: Option<&str>,
    ) -> Result<AccountView, StoreError> {
        if let Some(r) = reason {
            crate::units::refunds::check_reason(r)?;
        }
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            change_block(tx, account, &mut state, blocked, reason).await?;
            state.view(self.card())
        })
    }
}

/// Blocks or unblocks a locked account, with `operator.blocked` / `operator.unblocked`
/// when the state changes. Blocking again keeps the first time.
pub(crate) async fn change_block(
    tx: &mut Tx,
    account: &AccountId,
    state: &mut AccountState,
    blocked: bool,
    reason: Option<&str>,
) -> Result<(), StoreError> {
    if state.snap.blocked_at.is_some() != blocked {
        let action = if blocked { "blocked" } else { "unblocked" };
        let data = serde_json::json!({});
        emit_operator(tx, action, account.as_str(), data, reason, state.snap.now).await?;
    }
    let blocked_at = if blocked {
        Some(state.snap.blocked_at.unwrap_or(state.snap.now))
    } else {
        None
    };
    let params = params! { account_id: account.as_str(), blocked_at: blocked_at };
    tx.exec(&SET_BLOCKED, params).await?;
    state.snap.blocked_at = blocked_at;
    Ok(())
}
