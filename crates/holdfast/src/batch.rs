//! Batching for hot accounts (group commit). Debits for one account that arrive while a
//! transaction for that account is in flight wait in a bounded queue and are applied
//! together, in arrival order, in the next transaction ([`Store::debit_batch`]): each
//! keeps its own buffer check, ledger entry, idempotency key and result. A debit for an
//! account with nothing in flight goes straight through as a batch of one, so batching
//! adds no latency without contention.
//!
//! A debit that goes straight through runs on its caller's task (no task, no channel);
//! the batches queued behind it run on a task of their own, handed over when it ends or
//! when its caller goes away (a client that hangs up), so no debit is ever stranded. A batch that fails as a whole (a
//! database error) is retried debit by debit, so every caller gets its own answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use holdfast_core::{AccountId, Refusal};
use holdfast_store::{DebitRequest, MoneyResult, Store, StoreError};
use tokio::sync::oneshot;

/// Most debits one transaction applies.
pub const MAX_BATCH: usize = 64;

type Reply = oneshot::Sender<Result<MoneyResult, StoreError>>;

/// Per account: the debits waiting for the transaction in flight to finish.
#[derive(Default)]
struct Queues {
    waiting: HashMap<AccountId, Vec<(DebitRequest, Reply)>>,
}

#[derive(Clone, Default)]
pub struct DebitBatcher {
    queues: Arc<Mutex<Queues>>,
}

impl DebitBatcher {
    /// Applies one debit, batched with any others for the same account.
    pub async fn debit(
        &self,
        store: &Store,
        account: &AccountId,
        req: DebitRequest,
    ) -> Result<MoneyResult, StoreError> {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            match q.waiting.get_mut(account) {
                // A transaction is in flight for this account: wait for the next batch.
                Some(queue) => {
                    queue.push((req.clone(), reply));
                    false
                }
                None => {
                    q.waiting.insert(account.clone(), Vec::new());
                    true
                }
            }
        };
        if lead {
            // Nothing in flight: straight through, on the caller's own task. What queues
            // behind it meanwhile is handed to a task of its own when it ends (or when the
            // caller goes away mid-flight).
            let _hand_over = HandOver {
                batcher: self.clone(),
                store: store.clone(),
                account: account.clone(),
            };
            return store
                .debit(account, &req.usage, &req.key, req.job_ref.as_deref())
                .await;
        }
        match answer.await {
            Ok(result) => result,
            // The batch task went away: answer this debit on its own.
            Err(_) => {
                store
                    .debit(account, &req.usage, &req.key, req.job_ref.as_deref())
                    .await
            }
        }
    }

    /// The next batch for `account`, or `None` (and the account's slot freed) when
    /// nothing waits.
    fn next_batch(&self, account: &AccountId) -> Option<Vec<(DebitRequest, Reply)>> {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let queue = q.waiting.entry(account.clone()).or_default();
        if queue.is_empty() {
            q.waiting.remove(account);
            return None;
        }
        let take = queue.len().min(MAX_BATCH);
        Some(queue.drain(..take).collect())
    }

    /// Runs batches for `account` until its queue is empty.
    async fn drain(&self, store: Store, account: AccountId, mut batch: Vec<(DebitRequest, Reply)>) {
        loop {
            run_batch(&store, &account, batch).await;
            match self.next_batch(&account) {
                Some(next) => batch = next,
                None => return,
            }
        }
    }
}

/// Held by a debit that went straight through: when it ends, the debits that queued
/// behind it go to a task of their own.
struct HandOver {
    batcher: DebitBatcher,
    store: Store,
    account: AccountId,
}

impl Drop for HandOver {
    fn drop(&mut self) {
        let Some(batch) = self.batcher.next_batch(&self.account) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let (batcher, store, account) = (
                    self.batcher.clone(),
                    self.store.clone(),
                    self.account.clone(),
                );
                runtime.spawn(async move { batcher.drain(store, account, batch).await });
            }
            // No runtime to run them on (shutting down): dropping their replies makes
            // each waiting debit answer itself, and the slot is freed for them.
            Err(_) => {
                drop(batch);
                self.batcher.release(&self.account);
            }
        }
    }
}

impl DebitBatcher {
    /// Frees an account's slot, dropping whatever waits in it.
    fn release(&self, account: &AccountId) {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        q.waiting.remove(account);
    }
}

async fn run_batch(store: &Store, account: &AccountId, batch: Vec<(DebitRequest, Reply)>) {
    let requests: Vec<DebitRequest> = batch.iter().map(|(r, _)| r.clone()).collect();
    match store.debit_batch(account, &requests).await {
        Ok(results) => {
            for ((_, reply), result) in batch.into_iter().zip(results) {
                let _ = reply.send(result.map_err(|r: Refusal| StoreError::Refused(r)));
            }
        }
        Err(_) => {
            for (req, reply) in batch {
                let result = store
                    .debit(account, &req.usage, &req.key, req.job_ref.as_deref())
                    .await;
                let _ = reply.send(result);
            }
        }
    }
}
