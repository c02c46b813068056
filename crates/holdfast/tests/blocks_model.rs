//! Random sequences of credits on terms, debits (single and batched), submits whose holds
//! are captured or released, and job refunds, on one account, checked item by item
//! against a simple model of the credit blocks (docs site, "Credit blocks"): every
//! answer, every line of every entry, hold and charge, and each block's remaining and
//! held at the end; on both backends, with the audit after.

use holdfast::decide::{BlockAmount, BlockTerms, CreditCategory, GENERAL};
use holdfast::testing::*;
use holdfast::{
    CreditKind, DebitRequest, Engine, JobRefund, PutAccount, Refusal, StoreError, Usage,
};
use proptest::prelude::*;

const HOLD: i64 = 500_000;
const BUFFER: i64 = 1_000_000;
const MAX_OPEN: usize = 4;

#[derive(Debug, Clone)]
enum Op {
    /// A bonus of this many cents with a priority and an expiry this many days ahead.
    Credit(i64, i64, Option<i64>),
    Debit(i64),
    Batch(Vec<i64>),
    Submit,
    Complete,
    Fail,
    RefundJob,
}

fn op() -> impl Strategy<Value = Op> {
    let cents = (1i64..90).prop_map(|c| c * 10_000);
    let priority = prop_oneof![Just(10i64), Just(50), Just(90)];
    let expiry = proptest::option::of(1i64..4);
    prop_oneof![
        2 => (cents.clone(), priority, expiry).prop_map(|(c, p, e)| Op::Credit(c, p, e)),
        3 => cents.clone().prop_map(Op::Debit),
        1 => proptest::collection::vec(cents, 2..5).prop_map(Op::Batch),
        2 => Just(Op::Submit),
        2 => Just(Op::Complete),
        1 => Just(Op::Fail),
        1 => Just(Op::RefundJob),
    ]
}

/// A block in the model: its order key, what is left and held.
#[derive(Debug, Clone)]
struct Block {
    id: i64,
    priority: i64,
    expires: i64,
    remaining: i64,
    held: i64,
}

/// The rules as the docs state them, on plain numbers.
#[derive(Default)]
struct Model {
    general: i64,
    general_held: i64,
    blocks: Vec<Block>,
    suspended: bool,
    /// The open jobs' holds and the charged jobs' charges, as (block, amount) lines.
    holds: Vec<Vec<(i64, i64)>>,
    charges: Vec<Vec<(i64, i64)>>,
}

impl Model {
    fn balance(&self) -> i64 {
        self.general + self.blocks.iter().map(|b| b.remaining).sum::<i64>()
    }

    fn held(&self) -> i64 {
        self.general_held + self.blocks.iter().map(|b| b.held).sum::<i64>()
    }

    fn live(&self) -> bool {
        self.blocks.iter().any(|b| b.remaining > 0)
    }

    /// Sources by priority, expiry (none last), age; general money is priority 50, no
    /// expiry, older than every block. Each source's free money, front to back.
    fn draw(&self, amount: i64) -> Vec<(i64, i64)> {
        if !self.live() {
            return Vec::new();
        }
        let mut sources: Vec<(i64, i64, i64, i64)> = (self.blocks.iter())
            .filter(|b| b.remaining > 0)
            .map(|b| (b.priority, b.expires, b.id, b.remaining - b.held))
            .collect();
        sources.push((
            50,
            i64::MAX,
            GENERAL,
            (self.general - self.general_held).max(0),
        ));
        sources.sort();
        let mut lines: Vec<(i64, i64)> = Vec::new();
        let mut left = amount;
        for (_, _, id, free) in sources {
            let part = free.min(left);
            if part > 0 {
                lines.push((id, part));
                left -= part;
            }
        }
        if left > 0 {
            match lines.iter_mut().find(|l| l.0 == GENERAL) {
                Some(l) => l.1 += left,
                None => lines.push((GENERAL, left)),
            }
        }
        lines
    }

    /// Moves each line's amount: `remaining` (or general money) by `sign`.
    fn take(&mut self, lines: &[(i64, i64)], sign: i64) {
        for &(id, amount) in lines {
            match self.blocks.iter_mut().find(|b| b.id == id) {
                Some(b) => b.remaining += sign * amount,
                None => self.general += sign * amount,
            }
        }
    }

    fn hold(&mut self, lines: &[(i64, i64)], sign: i64) {
        for &(id, amount) in lines {
            match self.blocks.iter_mut().find(|b| b.id == id) {
                Some(b) => b.held += sign * amount,
                None => self.general_held += sign * amount,
            }
        }
    }

    fn settle(&mut self, credit: bool) {
        let balance = self.balance();
        if balance < 0 {
            self.suspended = true;
        } else if credit {
            self.suspended = false;
        }
    }

    /// A debit: its lines, or the refusal.
    fn debit(&mut self, amount: i64) -> Result<Vec<(i64, i64)>, Refusal> {
        if self.balance() - self.held() - amount < -BUFFER {
            return Err(Refusal::InsufficientFunds);
        }
        let lines = self.draw(amount);
        if lines.is_empty() {
            self.general -= amount;
        } else {
            self.take(&lines, -1);
        }
        self.settle(false);
        Ok(lines)
    }
}

/// The account on the engine's side.
struct Account<'e> {
    e: &'e Engine,
    id: String,
    open: Vec<String>,
    charged: Vec<String>,
    n: u64,
}

fn pairs(lines: &[BlockAmount]) -> Vec<(i64, i64)> {
    lines.iter().map(|l| (l.block, l.amount)).collect()
}

fn answer<T>(r: Result<T, StoreError>) -> Result<T, Refusal> {
    match r {
        Ok(v) => Ok(v),
        Err(StoreError::Refused(refusal)) => Err(refusal),
        Err(e) => panic!("{e:?}"),
    }
}

impl Account<'_> {
    fn key(&mut self) -> holdfast::IdempotencyKey {
        self.n += 1;
        key(&format!("k{}", self.n))
    }

    async fn debits(&mut self, amounts: &[i64]) -> Vec<Result<Vec<(i64, i64)>, Refusal>> {
        let items: Vec<_> = amounts
            .iter()
            .map(|a| {
                let req =
                    DebitRequest::new(&Usage::Amount(holdfast::Micros(*a)), &self.key(), None);
                (acct(&self.id), req)
            })
            .collect();
        let answers = if items.len() == 1 {
            let (account, req) = &items[0];
            vec![answer(
                self.e.debit(account, &req.usage, &req.key, None).await,
            )]
        } else {
            let all = self.e.debit_many(&items).await.unwrap();
            all.into_iter().collect()
        };
        answers
            .into_iter()
            .map(|a| a.map(|r| pairs(&r.entry.blocks)))
            .collect()
    }
}

/// Applies `op` to both sides; the answers must agree, item by item.
async fn step(m: &mut Model, a: &mut Account<'_>, op: &Op, now: i64) -> Result<(), TestCaseError> {
    const DAY: i64 = 86_400_000_000;
    match op {
        Op::Credit(amount, priority, days) => {
            let terms = BlockTerms {
                category: CreditCategory::Promotional,
                priority: *priority,
                expires_at: days.map(|d| now + d * DAY),
            };
            let key = a.key();
            let account = acct(&a.id);
            let r = a.e.credit_on_terms(
                &account,
                holdfast::Micros(*amount),
                CreditKind::Bonus,
                terms,
                &key,
            );
            let entry = r.await.unwrap().entry;
            let debt = (-m.general).max(0).min(*amount);
            let mut expected = vec![(entry.entry_id, amount - debt)];
            if debt > 0 {
                expected.push((GENERAL, debt));
            }
            prop_assert_eq!(pairs(&entry.blocks), expected, "{:?}", op);
            m.general += debt;
            let expires = days.map_or(i64::MAX, |d| now + d * DAY);
            m.blocks.push(Block {
                id: entry.entry_id,
                priority: *priority,
                expires,
                remaining: amount - debt,
                held: 0,
            });
            m.settle(true);
        }
        Op::Debit(amount) => {
            let got = a.debits(&[*amount]).await;
            prop_assert_eq!(got, vec![m.debit(*amount)], "{:?}", op);
        }
        Op::Batch(amounts) => {
            let got = a.debits(amounts).await;
            let expected: Vec<_> = amounts.iter().map(|x| m.debit(*x)).collect();
            prop_assert_eq!(got, expected, "{:?}", op);
        }
        Op::Submit => {
            let expected = if m.suspended {
                Err(Refusal::AccountSuspended)
            } else if a.open.len() >= MAX_OPEN {
                Err(Refusal::Busy)
            } else if m.balance() - m.held() < HOLD {
                Err(Refusal::InsufficientFunds)
            } else {
                Ok(m.draw(HOLD))
            };
            let k = a.key();
            let r = answer(a.e.submit(&submit_req(&a.id, "video", k.as_str())).await);
            let got = r.map(|s| {
                a.open.push(s.job.job_id.clone());
                pairs(&s.job.hold[0].blocks)
            });
            prop_assert_eq!(&got, &expected, "{:?}", op);
            if let Ok(lines) = expected {
                let lines = if lines.is_empty() {
                    vec![(GENERAL, HOLD)]
                } else {
                    lines
                };
                m.hold(&lines, 1);
                m.holds.push(lines);
            }
        }
        Op::Complete | Op::Fail => {
            // A suspended account's jobs wait: none is leased.
            if a.open.is_empty() || m.suspended {
                return Ok(());
            }
            let job = a.open.remove(0);
            let lines = m.holds.remove(0);
            let lease = a.e.lease("video", &worker(), 60).await.unwrap().unwrap();
            prop_assert_eq!(&lease.job.job_id, &job);
            m.hold(&lines, -1);
            if matches!(op, Op::Complete) {
                let done =
                    a.e.complete(&job_id(&job), &lease.lease_token, None)
                        .await
                        .unwrap();
                let shown = if done.charged[0].blocks.is_empty() {
                    vec![(GENERAL, HOLD)]
                } else {
                    pairs(&done.charged[0].blocks)
                };
                prop_assert_eq!(&shown, &lines, "{:?}", op);
                m.take(&lines, -1);
                m.settle(false);
                a.charged.push(job);
                m.charges.push(lines);
            } else {
                a.e.fail(&job_id(&job), &lease.lease_token, None)
                    .await
                    .unwrap();
            }
        }
        Op::RefundJob => {
            let (Some(job), Some(lines)) = (a.charged.pop(), m.charges.pop()) else {
                return Ok(());
            };
            let req = JobRefund {
                amount: None,
                reason: "model".into(),
                key: a.key(),
            };
            let given = a.e.refund_job(&job_id(&job), &req).await.unwrap();
            let back: Vec<(i64, i64)> = lines.iter().rev().copied().collect();
            let shown = pairs(&given.entries[0].blocks);
            let shown = if shown.is_empty() {
                vec![(GENERAL, HOLD)]
            } else {
                shown
            };
            prop_assert_eq!(shown, back, "{:?}", op);
            m.take(&lines, 1);
            m.settle(true);
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
    proptest!(config, |(start in 0i64..300, ops in proptest::collection::vec(op(), 1..30))| {
        let id = format!("blocks-{}", n.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let put = PutAccount {
            plan: "free".into(),
            plan_until: None,
            max_concurrent_jobs: Some(MAX_OPEN as i64),
            recharge: None,
            spend: None,
        };
        rt.block_on(e.put_account(&acct(&id), &put)).unwrap();
        let mut model = Model::default();
        if start > 0 {
            rt.block_on(top_up(e.store(), &id, &format!("{}.{:02}", start / 100, start % 100), "t"));
            model.general = start * 10_000;
        }
        let now = rt.block_on(e.store().now()).unwrap();
        let mut account = Account { e: &e, id: id.clone(), open: Vec::new(), charged: Vec::new(), n: 0 };
        for op in &ops {
            rt.block_on(step(&mut model, &mut account, op, now))?;
        }
        // Leave no job queued for the next case's leases: a general top-up ends a
        // suspension first (its jobs are not leased while it lasts).
        if model.suspended {
            let cents = (-model.balance()).max(0) / 10_000 + 100;
            rt.block_on(top_up(e.store(), &id, &format!("{}.{:02}", cents / 100, cents % 100), "end"));
            model.general += cents * 10_000;
            model.settle(true);
        }
        while !account.open.is_empty() {
            rt.block_on(step(&mut model, &mut account, &Op::Fail, now))?;
        }
        let view = rt.block_on(e.get_account(&acct(&id))).unwrap();
        prop_assert_eq!((view.balance, view.held), (model.balance(), model.held()));
        let shown: Vec<(i64, i64, i64)> = view.blocks.iter().map(|b| (b.block_id, b.remaining, b.held)).collect();
        let mut expected: Vec<(i64, i64, i64)> = (model.blocks.iter())
            .filter(|b| b.remaining > 0)
            .map(|b| (b.id, b.remaining, b.held))
            .collect();
        let mut sorted = shown.clone();
        sorted.sort();
        expected.sort();
        prop_assert_eq!(sorted, expected);
    });
    rt.block_on(assert_clean(e.store()));
}

#[test]
fn blocks_match_the_model_sqlite() {
    check(Backend::Sqlite, 24);
}

#[test]
fn blocks_match_the_model_postgres() {
    check(Backend::Postgres, 12);
}
