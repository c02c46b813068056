//! What a payment provider reports beyond money: which account a payment credited (so
//! its refunds and disputes, which name only the payment, find it), the customer →
//! account map an operator sets, and disputes, which block the account while open. The
//! money itself goes through the money units (a top-up keyed by the payment, refunds of
//! it), as any top-up does.

use holdfast_core::{AccountId, Timestamp};

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::AccountView;
use crate::store::{Store, now};
use crate::units::account_state::lock_account;
use crate::units::accounts::change_block;
use crate::units::writes::emit;
use crate::{in_read_tx, in_write_tx, params, statement};

static RECORD_PAYMENT: Stmt = statement!(shared "record_payment");
static PAYMENT_ACCOUNT: Stmt = statement!(shared "payment_account");
static PUT_PAYMENT_CUSTOMER: Stmt = statement!(shared "put_payment_customer");
static PAYMENT_CUSTOMER: Stmt = statement!(shared "payment_customer");
static DELETE_PAYMENT_CUSTOMER: Stmt = statement!(shared "delete_payment_customer");
static PAYMENT_DISPUTE: Stmt = statement!(shared "payment_dispute");
static PUT_PAYMENT_DISPUTE: Stmt = statement!(shared "put_payment_dispute");
static DISPUTES_HOLDING_BLOCK: Stmt = statement!(shared "disputes_holding_block");
static MARK_PAYMENT_REFUSED: Stmt = statement!(shared "mark_payment_refused");

/// A dispute's state, as the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisputeStatus {
    Open,
    Won,
    Lost,
}

impl DisputeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DisputeStatus::Open => "open",
            DisputeStatus::Won => "won",
            DisputeStatus::Lost => "lost",
        }
    }
}

/// A customer of a provider and the account it pays for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerAccount {
    pub account: AccountId,
    pub updated_at: Timestamp,
}

/// One dispute as the provider reports it.
#[derive(Debug, Clone, Copy)]
pub struct Dispute<'a> {
    pub provider: &'a str,
    pub dispute_id: &'a str,
    pub status: DisputeStatus,
    /// Why, for the `operator.blocked` / `operator.unblocked` event.
    pub reason: &'a str,
}

fn account_of(text: String) -> Result<AccountId, StoreError> {
    AccountId::parse(&text).map_err(|e| StoreError::Corrupt(format!("payment account: {e}")))
}

impl Store {
    /// Records that `payment_id` credits `account` (which must exist); the first account
    /// recorded for a payment stays, and is answered.
    pub async fn record_payment(
        &self,
        provider: &str,
        payment_id: &str,
        account: &AccountId,
    ) -> Result<AccountId, StoreError> {
        in_write_tx!(self, |tx| async {
            lock_account(tx, self.card(), account, &[]).await?;
            let now = now(tx).await?;
            let params = params! {
                provider: provider, payment_id: payment_id, account_id: account.as_str(), now: now,
            };
            account_of(tx.row(&RECORD_PAYMENT, params).await?.text("account_id")?)
        })
    }

    /// The account a payment credited, if one was recorded.
    pub async fn payment_account(
        &self,
        provider: &str,
        payment_id: &str,
    ) -> Result<Option<AccountId>, StoreError> {
        let params = params! { provider: provider, payment_id: payment_id };
        let row = in_read_tx!(self, |tx| tx.maybe_row(&PAYMENT_ACCOUNT, params))?;
        row.map(|r| account_of(r.text("account_id")?)).transpose()
    }

    /// Maps a provider's customer to an account (which must exist), replacing its map.
    pub async fn put_customer(
        &self,
        provider: &str,
        customer_id: &str,
        account: &AccountId,
    ) -> Result<CustomerAccount, StoreError> {
        in_write_tx!(self, |tx| async {
            lock_account(tx, self.card(), account, &[]).await?;
            let now = now(tx).await?;
            let params = params! {
                provider: provider, customer_id: customer_id, account_id: account.as_str(), now: now,
            };
            tx.exec(&PUT_PAYMENT_CUSTOMER, params).await?;
            Ok(CustomerAccount {
                account: account.clone(),
                updated_at: now,
            })
        })
    }

    /// The account a provider's customer is mapped to, if any.
    pub async fn customer_account(
        &self,
        provider: &str,
        customer_id: &str,
    ) -> Result<Option<CustomerAccount>, StoreError> {
        let params = params! { provider: provider, customer_id: customer_id };
        let row = in_read_tx!(self, |tx| tx.maybe_row(&PAYMENT_CUSTOMER, params))?;
        row.map(|r| {
            Ok(CustomerAccount {
                account: account_of(r.text("account_id")?)?,
                updated_at: r.int("updated_at")?,
            })
        })
        .transpose()
    }

    /// Removes a customer's map; whether there was one.
    pub async fn delete_customer(
        &self,
        provider: &str,
        customer_id: &str,
    ) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let params = params! { provider: provider, customer_id: customer_id };
            Ok(tx.exec(&DELETE_PAYMENT_CUSTOMER, params).await? > 0)
        })
    }

    /// Records a dispute of `account`'s payment as the provider reports it, in order of
    /// arrival, under the account's lock. A dispute newly open blocks the account; one
    /// closed (won or lost) is closed for good, so an `open` that arrives after it changes
    /// nothing. A won dispute lifts the account's block when a dispute made that block
    /// and none is open any more; a lost one leaves the account blocked for the operator.
    pub async fn record_dispute(
        &self,
        account: &AccountId,
        dispute: Dispute<'_>,
    ) -> Result<AccountView, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            let key = params! { provider: dispute.provider, dispute_id: dispute.dispute_id };
            let known = tx.maybe_row(&PAYMENT_DISPUTE, key).await?;
            let was = match &known {
                Some(row) => Some((row.text("status")?, row.opt_int("blocked_at")?)),
                None => None,
            };
            let closed_already = was.as_ref().is_some_and(|(status, _)| status != "open");
            if closed_already || (was.is_some() && dispute.status == DisputeStatus::Open) {
                return state.view(self.card());
            }
            let reason = Some(dispute.reason);
            let mut blocked_at = was.as_ref().and_then(|(_, at)| *at);
            // A dispute first seen lost blocks as its opening would have: the end is the
            // same whichever of the two Stripe delivers first.
            let blocks = match dispute.status {
                DisputeStatus::Open => true,
                DisputeStatus::Lost => was.is_none(),
                DisputeStatus::Won => false,
            };
            if blocks && state.snap.blocked_at.is_none() {
                change_block(tx, account, &mut state, true, reason).await?;
                blocked_at = state.snap.blocked_at;
            }
            // A lost dispute holds the block it leaves, whoever made it: no other
            // dispute's win lifts it (the operator decides).
            if dispute.status == DisputeStatus::Lost {
                blocked_at = state.snap.blocked_at;
            }
            let params = params! {
                provider: dispute.provider, dispute_id: dispute.dispute_id,
                account_id: account.as_str(), status: dispute.status.as_str(),
                blocked_at: blocked_at, now: state.snap.now,
            };
            tx.exec(&PUT_PAYMENT_DISPUTE, params).await?;
            if dispute.status == DisputeStatus::Won && state.snap.blocked_at.is_some() {
                let params = params! {
                    account_id: account.as_str(), blocked_at: state.snap.blocked_at,
                };
                let holding = tx.row(&DISPUTES_HOLDING_BLOCK, params).await?;
                let made = holding.int("made_block")? > 0;
                if made && holding.int("open")? == 0 && holding.int("lost_holding")? == 0 {
                    change_block(tx, account, &mut state, false, reason).await?;
                }
            }
            state.view(self.card())
        })
    }

    /// Records that a payment of `account` was refused (another currency than the
    /// card's): the event `payment.refused` with `data`, for the operator, the first time
    /// only, whichever of the payment's events was refused (its payment, refund or
    /// dispute, each sent or retried any number of times). The payment was recorded
    /// before ([`Store::record_payment`]). Answers whether the event was emitted.
    pub async fn payment_refused(
        &self,
        provider: &str,
        payment_id: &str,
        account: &AccountId,
        data: serde_json::Value,
    ) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let state = lock_account(tx, self.card(), account, &[]).await?;
            let now = state.snap.now;
            let params = params! { provider: provider, payment_id: payment_id, now: now };
            if tx.maybe_row(&MARK_PAYMENT_REFUSED, params).await?.is_none() {
                return Ok(false);
            }
            let id = account.as_str();
            emit(tx, "payment.refused", id, None, data.clone(), now).await?;
            Ok(true)
        })
    }
}
