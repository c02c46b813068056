//! Random sequences of spending — debits, batches of debits, submits whose holds are
//! captured or released, job refunds — on an account with a monthly spend limit and
//! thresholds, checked item by item against a simple model of the rules (API.md
//! "Accounts"): every answer, the period's spending, and the thresholds told, in order,
//! each with the spending it was told at; on both backends, with the audit after.

use holdfast::decide::{SpendPeriod, SpendPolicy, SpendThreshold};
use holdfast::testing::*;
use holdfast::{
    DebitRequest, Engine, EventFilter, JobRefund, PutAccount, Refusal, StoreError, Usage,
};
use proptest::prelude::*;

const HOLD: i64 = 500_000;
const MAX_OPEN: usize = 5;

#[derive(Debug, Clone)]
enum Op {
    Debit(i64),
    Batch(Vec<i64>),
    Submit,
    Complete,
    Fail,
    RefundJob,
}

fn op() -> impl Strategy<Value = Op> {
    let cents = (1i64..80).prop_map(|c| c * 10_000);
    prop_oneof![
        3 => cents.clone().prop_map(Op::Debit),
        2 => proptest::collection::vec(cents, 2..6).prop_map(Op::Batch),
        2 => Just(Op::Submit),
        2 => Just(Op::Complete),
        1 => Just(Op::Fail),
        1 => Just(Op::RefundJob),
    ]
}

/// The rules, as API.md states them, for one account with money to spare.
struct Model {
    limit: i64,
    lines: Vec<i64>,
    spent: i64,
    held: i64,
    told: i64,
    /// (threshold, spending when told), in order.
    events: Vec<(i64, i64)>,
}

impl Model {
    fn new(limit: i64) -> Model {
        let mut lines = vec![limit * 25 / 100, limit * 50 / 100, 1_000_000, limit];
        lines.sort_unstable();
        lines.dedup();
        Model {
            limit,
            lines,
            spent: 0,
            held: 0,
            told: 0,
            events: Vec::new(),
        }
    }

    /// May `amount` more be committed?
    fn commit(&self, amount: i64) -> Result<(), Refusal> {
        if self.spent + self.held + amount > self.limit {
            Err(Refusal::SpendLimitReached)
        } else {
            Ok(())
        }
    }

    /// Spends `amount` (negative: a refund) and tells the thresholds first reached.
    fn spend(&mut self, amount: i64) {
        self.spent += amount;
        for line in self.lines.clone() {
            if line > self.told && line <= self.spent {
                self.events.push((line, self.spent));
                self.told = line;
            }
        }
    }

    fn debit(&mut self, amount: i64) -> Result<(), Refusal> {
        self.commit(amount)?;
        self.spend(amount);
        Ok(())
    }
}

/// The engine's side: the account, its open jobs (oldest first) and its charged jobs.
struct Account<'e> {
    e: &'e Engine,
    id: String,
    open: Vec<String>,
    charged: Vec<String>,
    n: usize,
}

impl Account<'_> {
    fn key(&mut self) -> holdfast::IdempotencyKey {
        self.n += 1;
        key(&format!("k{}", self.n))
    }

    async fn debit(&mut self, amount: i64) -> Result<(), Refusal> {
        let (k, usage) = (self.key(), Usage::Amount(holdfast::Micros(amount)));
        let r = self.e.debit(&acct(&self.id), &usage, &k, None).await;
        answer(r).map(|_| ())
    }

    async fn batch(&mut self, amounts: &[i64]) -> Vec<Result<(), Refusal>> {
        let mut items = Vec::new();
        for a in amounts {
            let usage = Usage::Amount(holdfast::Micros(*a));
            items.push((acct(&self.id), DebitRequest::new(&usage, &self.key(), None)));
        }
        let answers = self.e.debit_many(&items).await.unwrap();
        answers.into_iter().map(|a| a.map(|_| ())).collect()
    }

    async fn submit(&mut self) -> Result<(), Refusal> {
        let k = format!("s{}", self.n + 1);
        self.n += 1;
        let r = self.e.submit(&submit_req(&self.id, "video", &k)).await;
        let job = answer(r)?;
        self.open.push(job.job.job_id);
        Ok(())
    }

    /// Leases the oldest open job (it must be the one leased) and completes or fails it.
    async fn finish(&mut self, complete: bool) -> Option<String> {
        if self.open.is_empty() {
            return None;
        }
        let job = self.open.remove(0);
        let lease = self.e.lease("video", &worker(), 60).await.unwrap().unwrap();
        assert_eq!(lease.job.job_id, job, "the oldest open job is leased");
        let id = job_id(&job);
        if complete {
            self.e
                .complete(&id, &lease.lease_token, None)
                .await
                .unwrap();
            self.charged.push(job.clone());
        } else {
            self.e.fail(&id, &lease.lease_token, None).await.unwrap();
        }
        Some(job)
    }

    async fn refund_job(&mut self) -> bool {
        let Some(job) = self.charged.pop() else {
            return false;
        };
        let req = JobRefund {
            amount: None,
            reason: "model".into(),
            key: self.key(),
        };
        self.e.refund_job(&job_id(&job), &req).await.unwrap();
        true
    }
}

fn answer<T>(r: Result<T, StoreError>) -> Result<T, Refusal> {
    match r {
        Ok(v) => Ok(v),
        Err(StoreError::Refused(refusal)) => Err(refusal),
        Err(e) => panic!("{e:?}"),
    }
}

/// Applies `op` to both sides; the answers must agree, item by item.
async fn step(m: &mut Model, a: &mut Account<'_>, op: &Op) -> Result<(), TestCaseError> {
    match op {
        Op::Debit(amount) => {
            prop_assert_eq!(a.debit(*amount).await, m.debit(*amount), "{:?}", op);
        }
        Op::Batch(amounts) => {
            let got = a.batch(amounts).await;
            let expected: Vec<_> = amounts.iter().map(|x| m.debit(*x)).collect();
            prop_assert_eq!(got, expected, "{:?}", op);
        }
        Op::Submit => {
            let expected = if a.open.len() >= MAX_OPEN {
                Err(Refusal::Busy)
            } else {
                m.commit(HOLD)
            };
            prop_assert_eq!(a.submit().await, expected.clone(), "{:?}", op);
            if expected.is_ok() {
                m.held += HOLD;
            }
        }
        Op::Complete | Op::Fail => {
            let complete = matches!(op, Op::Complete);
            if a.finish(complete).await.is_some() {
                m.held -= HOLD;
                if complete {
                    m.spend(HOLD);
                }
            }
        }
        Op::RefundJob => {
            if a.refund_job().await {
                m.spend(-HOLD);
            }
        }
    }
    Ok(())
}

fn check(backend: Backend, cases: u32) {
    let rt = model_runtime();
    let Some((_db, e)) = rt.block_on(engine(backend)) else {
        return;
    };
    let n = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases,
        ..ProptestConfig::default()
    };
    let limit = (100i64..600).prop_map(|c| c * 10_000);
    proptest!(config, |(limit in limit, ops in proptest::collection::vec(op(), 1..40))| {
        let id = format!("spend-{}", n.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let alerts = ["25%", "50%", "1.00", "100%"];
        let rule = SpendPolicy {
            limit: Some(holdfast::Micros(limit)),
            period: SpendPeriod::Month,
            alerts: alerts.iter().map(|t| SpendThreshold::parse(t).unwrap()).collect(),
            ..SpendPolicy::default()
        };
        let put = PutAccount {
            plan: "free".into(),
            plan_until: None,
            max_concurrent_jobs: Some(MAX_OPEN as i64),
            recharge: None,
            spend: Some(Some(rule)),
        };
        rt.block_on(e.put_account(&acct(&id), &put)).unwrap();
        rt.block_on(top_up(e.store(), &id, "100.00", "t"));
        let mut model = Model::new(limit);
        let mut account = Account { e: &e, id: id.clone(), open: Vec::new(), charged: Vec::new(), n: 0 };
        for op in &ops {
            rt.block_on(step(&mut model, &mut account, op))?;
        }
        // Leave no job queued for the next case's leases.
        while rt.block_on(account.finish(false)).is_some() {
            model.held -= HOLD;
        }
        let view = rt.block_on(e.get_account(&acct(&id))).unwrap();
        let spend = view.spend.unwrap();
        prop_assert_eq!((spend.spent, view.held), (model.spent, model.held));
        let filter = EventFilter {
            limit: 1000,
            account_id: Some(id.clone()),
            event_type: Some("account.spend_threshold".into()),
            ..Default::default()
        };
        let events = rt.block_on(e.store().events(&filter)).unwrap().items;
        let told: Vec<(i64, i64)> = events
            .iter()
            .map(|ev| (ev.data["threshold_micros"].as_i64().unwrap(), ev.data["spent_micros"].as_i64().unwrap()))
            .collect();
        prop_assert_eq!(told, model.events);
    });
    rt.block_on(assert_clean(e.store()));
}

#[test]
fn spending_matches_the_model_sqlite() {
    check(Backend::Sqlite, 32);
}

#[test]
fn spending_matches_the_model_postgres() {
    check(Backend::Postgres, 16);
}
