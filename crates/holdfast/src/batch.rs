//! Batching (group commit), the TigerBeetle lesson on our database. Debits are spread
//! over a few streams by account (one stream on SQLite, whose writers take turns anyway). A
//! debit whose stream has nothing in flight goes straight through, on its caller's task, as
//! a transaction of its own: without contention batching adds no latency. So does, on
//! PostgreSQL, a debit whose stream is busy while no debit waits in any stream (light
//! load: up to as many such at once as there are streams), rather than wait a whole
//! transaction to be batched with nothing. Other debits that arrive while their stream's
//! transaction is in flight wait in the stream's queue and are applied together in its
//! next transaction ([`Store::debit_many`]), set-based as a batch ingest is: two
//! statements whatever the batch's size, each account's debits in arrival order, each
//! debit with its own buffer check, ledger entry, idempotency key and result (a batch of
//! one is applied as a single debit). A hot account's debits share one lock, one write
//! and one commit; many accounts' debits share one commit.
//!
//! What queues behind a debit that went straight through is handed to a task of its own
//! when that debit ends or when its caller goes away (a client that hangs up), so no
//! debit is ever stranded. A batch that fails as a whole (a database error) is retried
//! debit by debit, so every caller gets its own answer.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use holdfast_core::AccountId;
use holdfast_store::{DebitRequest, Dialect, MoneyResult, Store, StoreError};
use tokio::sync::oneshot;

/// How debits are batched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Most debits one transaction applies; 1 turns batching off (every debit is a
    /// transaction of its own, straight through).
    pub max_batch: usize,
    /// Commit streams on PostgreSQL: batch transactions in flight at once. Each stream's accounts
    /// are its own (by hash), so streams never wait for each other's locks. Fewer streams
    /// batch more; more streams keep a debit stuck behind a busy account's lock from
    /// holding up as many others. (SQLite has one: its writers take turns anyway.)
    pub postgres_streams: u64,
}

impl Default for BatchOptions {
    /// 64 debits, 2 streams: measured best on the bench machine (BENCHMARKS.md).
    fn default() -> Self {
        BatchOptions {
            max_batch: 64,
            postgres_streams: 2,
        }
    }
}

type Reply = oneshot::Sender<Result<MoneyResult, StoreError>>;

/// A debit waiting in a stream.
struct Waiting {
    account: AccountId,
    req: DebitRequest,
    reply: Reply,
}

/// Per stream with a transaction in flight: the debits waiting for it to finish, and the
/// accounts that transaction writes; and the accounts of the debits passing busy streams.
#[derive(Default)]
struct Queues {
    waiting: HashMap<u64, Vec<Waiting>>,
    writing: HashMap<u64, Vec<AccountId>>,
    passing: Vec<AccountId>,
}

/// What a debit does on arrival.
enum Turn {
    /// Its stream had nothing in flight: straight through, and the stream is its own.
    Lead,
    /// Its stream is busy but nothing waits anywhere (light load): straight through
    /// beside it, not waiting a transaction for nothing.
    Pass,
    /// Under load: into the stream's next batch.
    Wait(oneshot::Receiver<Result<MoneyResult, StoreError>>),
}

#[derive(Clone, Default)]
pub struct DebitBatcher {
    queues: Arc<Mutex<Queues>>,
    opts: BatchOptions,
}

impl DebitBatcher {
    pub fn new(opts: BatchOptions) -> DebitBatcher {
        DebitBatcher {
            queues: Arc::default(),
            opts: BatchOptions {
                max_batch: opts.max_batch.max(1),
                postgres_streams: opts.postgres_streams.max(1),
            },
        }
    }

    fn stream_of(&self, store: &Store, account: &AccountId) -> u64 {
        match store.dialect() {
            Dialect::Sqlite => 0,
            Dialect::Postgres => {
                let mut h = DefaultHasher::new();
                account.as_str().hash(&mut h);
                h.finish() % self.opts.postgres_streams
            }
        }
    }
}

impl DebitBatcher {
    /// Applies one debit, batched with any others of its stream.
    pub async fn debit(
        &self,
        store: &Store,
        account: &AccountId,
        req: DebitRequest,
    ) -> Result<MoneyResult, StoreError> {
        if self.opts.max_batch == 1 {
            return store.debit_one(account, &req).await;
        }
        let stream = self.stream_of(store, account);
        let turn = {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            let busy = q.waiting.contains_key(&stream);
            if !busy {
                q.waiting.insert(stream, Vec::new());
                q.writing.insert(stream, vec![account.clone()]);
                Turn::Lead
            } else if q.passing.len() < self.passing_limit(store)
                && q.waiting.values().all(Vec::is_empty)
                && !q.passing.contains(account)
                // Not beside a transaction of the same account: that one would wait for
                // the lock, and batch with it instead.
                && !q.writing.get(&stream).is_some_and(|w| w.contains(account))
            {
                q.passing.push(account.clone());
                Turn::Pass
            } else {
                // A transaction is in flight for this stream: wait for the next batch.
                let (reply, answer) = oneshot::channel();
                q.waiting.entry(stream).or_default().push(Waiting {
                    account: account.clone(),
                    req: req.clone(),
                    reply,
                });
                Turn::Wait(answer)
            }
        };
        match turn {
            Turn::Lead => {
                // Nothing in flight: straight through, on the caller's own task. What
                // queues behind it meanwhile is handed to a task of its own when it ends
                // (or when the caller goes away mid-flight).
                let _hand_over = HandOver {
                    batcher: self.clone(),
                    store: store.clone(),
                    stream,
                };
                store.debit_one(account, &req).await
            }
            Turn::Pass => {
                let _passed = Passing(self.clone(), account.clone());
                store.debit_one(account, &req).await
            }
            Turn::Wait(answer) => match answer.await {
                Ok(result) => result,
                // The batch task went away: answer this debit on its own.
                Err(_) => store.debit_one(account, &req).await,
            },
        }
    }

    /// How many debits may pass busy streams at once: as many as there are streams on
    /// PostgreSQL (so light load runs up to twice as many transactions as streams); none
    /// on SQLite, whose writers queue at its write gate anyway.
    fn passing_limit(&self, store: &Store) -> usize {
        match store.dialect() {
            Dialect::Sqlite => 0,
            Dialect::Postgres => self.opts.postgres_streams as usize,
        }
    }

    /// The next batch of `stream`, or `None` (and the stream freed) when nothing waits.
    fn next_batch(&self, stream: u64) -> Option<Vec<Waiting>> {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let queue = q.waiting.entry(stream).or_default();
        // A debit whose caller went away (its request timed out, or the client hung up)
        // was answered without it: it is not applied behind the caller's back.
        queue.retain(|w| !w.reply.is_closed());
        if queue.is_empty() {
            q.waiting.remove(&stream);
            q.writing.remove(&stream);
            return None;
        }
        let take = queue.len().min(self.opts.max_batch);
        let batch: Vec<Waiting> = queue.drain(..take).collect();
        let accounts = batch.iter().map(|w| w.account.clone()).collect();
        q.writing.insert(stream, accounts);
        Some(batch)
    }

    /// Frees a stream, dropping whatever waits in it (each waiting debit then answers
    /// itself).
    fn release(&self, stream: u64) {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        q.waiting.remove(&stream);
        q.writing.remove(&stream);
    }

    /// Runs batches of `stream` until its queue is empty.
    async fn drain(&self, store: Store, stream: u64, mut batch: Vec<Waiting>) {
        loop {
            run_batch(&store, batch).await;
            match self.next_batch(stream) {
                Some(next) => batch = next,
                None => return,
            }
        }
    }
}

/// Held by a debit passing a busy stream: when it ends (or its caller goes away), it no
/// longer counts as passing.
struct Passing(DebitBatcher, AccountId);

impl Drop for Passing {
    fn drop(&mut self) {
        let mut q = self.0.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = q.passing.iter().position(|a| a == &self.1) {
            q.passing.swap_remove(i);
        }
    }
}

/// Held by a debit that went straight through: when it ends, the debits that queued
/// behind it go to a task of their own.
struct HandOver {
    batcher: DebitBatcher,
    store: Store,
    stream: u64,
}

impl Drop for HandOver {
    fn drop(&mut self) {
        let Some(batch) = self.batcher.next_batch(self.stream) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let (batcher, store, stream) =
                    (self.batcher.clone(), self.store.clone(), self.stream);
                runtime.spawn(async move { batcher.drain(store, stream, batch).await });
            }
            // No runtime to run them on (shutting down): dropping their replies makes
            // each waiting debit answer itself.
            Err(_) => {
                drop(batch);
                self.batcher.release(self.stream);
            }
        }
    }
}

/// Applies a batch in one transaction ([`Store::debit_many`]: each account's debits in
/// arrival order). When the transaction fails as a whole, each debit is answered on its own.
async fn run_batch(store: &Store, batch: Vec<Waiting>) {
    let (items, replies): (Vec<(AccountId, DebitRequest)>, Vec<Reply>) = batch
        .into_iter()
        .map(|w| ((w.account, w.req), w.reply))
        .unzip();
    match store.debit_many(&items).await {
        Ok(results) => {
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(result.map_err(StoreError::Refused));
            }
        }
        // The database cannot be reached (pool or write turn timed out, connection lost):
        // trying each debit on its own would only make each wait again.
        Err(StoreError::Unavailable(cause)) => {
            for reply in replies {
                let _ = reply.send(Err(StoreError::Unavailable(cause.clone())));
            }
        }
        // Nor can it write (a full disk): each debit on its own would fail the same way.
        Err(StoreError::DiskFull(cause)) => {
            for reply in replies {
                let _ = reply.send(Err(StoreError::DiskFull(cause.clone())));
            }
        }
        Err(_) => {
            for ((account, req), reply) in items.iter().zip(replies) {
                let _ = reply.send(store.debit_one(account, req).await);
            }
        }
    }
}
