//! Batching (group commit), the TigerBeetle lesson on our database. Debits are spread
//! over a few streams by account (one stream on SQLite, whose writers take turns anyway). A
//! debit whose stream has nothing in flight goes straight through, on its caller's task, as
//! a transaction of its own: without contention batching adds no latency. Debits that
//! arrive while their stream's transaction is in flight wait in the stream's queue and are
//! applied together in its next transaction ([`Store::debit_many`]), set-based as a batch
//! ingest is: three statements whatever the batch's size, each account's debits in
//! arrival order, each debit with its own buffer check, ledger entry, idempotency key and
//! result. A hot account's debits share one lock, one write and one commit; many
//! accounts' debits share one commit.
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

/// Per stream with a transaction in flight: the debits waiting for it to finish.
#[derive(Default)]
struct Queues {
    waiting: HashMap<u64, Vec<Waiting>>,
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
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            match q.waiting.get_mut(&stream) {
                // A transaction is in flight for this stream: wait for the next batch.
                Some(queue) => {
                    queue.push(Waiting {
                        account: account.clone(),
                        req: req.clone(),
                        reply,
                    });
                    false
                }
                None => {
                    q.waiting.insert(stream, Vec::new());
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
                stream,
            };
            return store.debit_one(account, &req).await;
        }
        match answer.await {
            Ok(result) => result,
            // The batch task went away: answer this debit on its own.
            Err(_) => store.debit_one(account, &req).await,
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
            return None;
        }
        let take = queue.len().min(self.opts.max_batch);
        Some(queue.drain(..take).collect())
    }

    /// Frees a stream, dropping whatever waits in it (each waiting debit then answers
    /// itself).
    fn release(&self, stream: u64) {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        q.waiting.remove(&stream);
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
