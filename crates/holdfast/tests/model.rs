//! Random sequences of money operations (with reused idempotency keys) checked against a
//! simple in-memory model of DESIGN.md's rules, on both backends, followed by the audit.

use std::collections::HashMap;

use holdfast::testing::*;
use holdfast::{
    AccountId, CreditKind, DebitRequest, Micros, MoneyResult, Refusal, StoreError, Usage,
};
use holdfast_store::Store;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    TopUp {
        amount: i64,
        key: u8,
    },
    Bonus {
        amount: i64,
        key: u8,
    },
    Debit {
        amount: i64,
        key: u8,
    },
    Refund {
        top_up_key: u8,
        amount: i64,
        key: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let amount = 1i64..3_000_000;
    let k = 0u8..8;
    prop_oneof![
        (amount.clone(), k.clone()).prop_map(|(amount, key)| Op::TopUp { amount, key }),
        (amount.clone(), k.clone()).prop_map(|(amount, key)| Op::Bonus { amount, key }),
        (amount.clone(), k.clone()).prop_map(|(amount, key)| Op::Debit { amount, key }),
        (k.clone(), amount, k).prop_map(|(top_up_key, amount, key)| Op::Refund {
            top_up_key,
            amount,
            key
        }),
    ]
}

/// What the model says an operation returns: the balance delta, a replay, or a refusal.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Applied(i64),
    Replayed(i64),
    Refused(Refusal),
}

#[derive(Default)]
struct Model {
    balance: i64,
    credited: i64,
    spent: i64,
    suspended: bool,
    /// key → (the request, its delta)
    keys: HashMap<u8, (String, i64)>,
    /// top-up key → (amount, refunded so far)
    top_ups: HashMap<u8, (i64, i64)>,
}

const BUFFER: i64 = 1_000_000;

impl Model {
    fn apply(&mut self, op: &Op) -> Outcome {
        let (key, request) = match op {
            Op::TopUp { amount, key } => (*key, format!("top_up {amount}")),
            Op::Bonus { amount, key } => (*key, format!("bonus {amount}")),
            Op::Debit { amount, key } => (*key, format!("debit {amount}")),
            Op::Refund {
                top_up_key,
                amount,
                key,
            } => (*key, format!("refund {top_up_key} {amount}")),
        };
        if let Op::Refund { top_up_key, .. } = op {
            // The top-up is looked up before the idempotency key (404 comes first).
            match self.keys.get(top_up_key) {
                Some((r, _)) if r.starts_with("top_up") => {}
                Some((r, _)) if r.starts_with("bonus") => {
                    return match self.keys.get(&key) {
                        Some((r2, _)) if *r2 != request => {
                            Outcome::Refused(Refusal::IdempotencyMismatch)
                        }
                        _ => Outcome::Refused(Refusal::NotRefundable),
                    };
                }
                _ => return Outcome::Refused(Refusal::TopUpNotFound),
            }
        }
        if let Some((r, delta)) = self.keys.get(&key) {
            return if *r == request {
                Outcome::Replayed(*delta)
            } else {
                Outcome::Refused(Refusal::IdempotencyMismatch)
            };
        }
        let delta = match op {
            Op::TopUp { amount, .. } | Op::Bonus { amount, .. } => {
                self.credited += amount;
                *amount
            }
            Op::Debit { amount, .. } => {
                if self.balance - amount < -BUFFER {
                    return Outcome::Refused(Refusal::InsufficientFunds);
                }
                self.spent += amount;
                -amount
            }
            Op::Refund {
                top_up_key, amount, ..
            } => {
                let (total, refunded) = self.top_ups[top_up_key];
                if amount + refunded > total {
                    return Outcome::Refused(Refusal::RefundExceedsTopUp);
                }
                self.top_ups.insert(*top_up_key, (total, refunded + amount));
                -amount
            }
        };
        if let Op::TopUp { amount, .. } = op {
            self.top_ups.insert(key, (*amount, 0));
        }
        self.balance += delta;
        let credit = matches!(op, Op::TopUp { .. } | Op::Bonus { .. });
        if self.balance < 0 {
            self.suspended = true;
        } else if credit {
            self.suspended = false;
        }
        self.keys.insert(key, (request, delta));
        Outcome::Applied(delta)
    }
}

async fn run(store: &Store, account: &str, op: &Op) -> Outcome {
    let k = |n: u8| key(&format!("k{n}"));
    let a = acct(account);
    let r = match op {
        Op::TopUp { amount, key } => {
            store
                .credit(&a, Micros(*amount), CreditKind::TopUp, &k(*key))
                .await
        }
        Op::Bonus { amount, key } => {
            store
                .credit(&a, Micros(*amount), CreditKind::Bonus, &k(*key))
                .await
        }
        Op::Debit { amount, key } => {
            store
                .debit(&a, &Usage::Amount(Micros(*amount)), &k(*key), None)
                .await
        }
        Op::Refund {
            top_up_key,
            amount,
            key,
        } => {
            store
                .refund(&a, &k(*top_up_key), Micros(*amount), &k(*key))
                .await
        }
    };
    match r {
        Ok(m) if m.replay => Outcome::Replayed(m.entry.delta),
        Ok(m) => Outcome::Applied(m.entry.delta),
        Err(StoreError::Refused(x)) => Outcome::Refused(x),
        Err(e) => panic!("store error {e}"),
    }
}

/// The debit an `Op::Debit` stands for.
fn debit_request(op: &Op) -> DebitRequest {
    match op {
        Op::Debit { amount, key: k } => DebitRequest {
            usage: Usage::Amount(Micros(*amount)),
            key: key(&format!("k{k}")),
            job_ref: None,
            actor: holdfast::actor::LIBRARY.into(),
        },
        other => panic!("not a debit: {other:?}"),
    }
}

/// What one debit of a batch answered, as the model says it.
fn outcome(r: Result<MoneyResult, Refusal>) -> Outcome {
    match r {
        Ok(m) if m.replay => Outcome::Replayed(m.entry.delta),
        Ok(m) => Outcome::Applied(m.entry.delta),
        Err(x) => Outcome::Refused(x),
    }
}

/// A run of debits applied in one transaction.
async fn run_batch(store: &Store, account: &str, ops: &[Op]) -> Vec<Outcome> {
    let items: Vec<(AccountId, DebitRequest)> = ops
        .iter()
        .map(|op| (acct(account), debit_request(op)))
        .collect();
    let results = store.ingest(&items).await.expect("batch");
    results.into_iter().map(outcome).collect()
}

/// The runtime the model tests drive the engine on.
fn check(backend: Backend, cases: u32, batched: bool) {
    let rt = model_runtime();
    let Some((_db, engine)) = rt.block_on(engine(backend)) else {
        return;
    };
    let store = engine.store().clone();
    let n = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in proptest::collection::vec(op(), 1..40), chunk in 2usize..8)| {
        let account = format!("model-{}", n.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        rt.block_on(put(&store, &account, "free"));
        let mut model = Model::default();
        let mut i = 0;
        while i < ops.len() {
            // Batched: a run of consecutive debits (up to `chunk`) goes in one transaction.
            let run_len = if batched {
                ops[i..].iter().take(chunk).take_while(|o| matches!(o, Op::Debit { .. })).count()
            } else {
                0
            };
            if run_len > 1 {
                let got = rt.block_on(run_batch(&store, &account, &ops[i..i + run_len]));
                for (j, op) in ops[i..i + run_len].iter().enumerate() {
                    prop_assert_eq!(&got[j], &model.apply(op), "step {} {:?} (batched)", i + j, op);
                }
                i += run_len;
                continue;
            }
            let expected = model.apply(&ops[i]);
            let got = rt.block_on(run(&store, &account, &ops[i]));
            prop_assert_eq!(got, expected, "step {} {:?}", i, &ops[i]);
            i += 1;
        }
        let a = rt.block_on(store.get_account(&acct(&account))).unwrap();
        prop_assert_eq!((a.balance, a.total_credited, a.total_spent), (model.balance, model.credited, model.spent));
        prop_assert_eq!(a.suspended_at.is_some(), model.suspended);
    });
    rt.block_on(assert_clean(&store));
}

/// Batch ingest: calls of debits over three accounts (keys reused within and across
/// calls), each call through `Engine::debit_many`, between top-ups; every item's answer
/// must be what the single-debit model of its own account says, in order.
fn check_ingest(backend: Backend, cases: u32) {
    let rt = model_runtime();
    let Some((_db, engine)) = rt.block_on(engine(backend)) else {
        return;
    };
    let store = engine.store().clone();
    let n = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases,
        ..ProptestConfig::default()
    };
    // Few amounts, so that a reused key is often the same request (a replay), not only
    // another one (a mismatch).
    let item = (0usize..3, 1i64..5, 0u8..8).prop_map(|(a, units, key)| {
        (
            a,
            Op::Debit {
                amount: units * 450_000,
                key,
            },
        )
    });
    let call = (1i64..5_000_000, proptest::collection::vec(item, 1..30));
    proptest!(config, |(calls in proptest::collection::vec(call, 1..6))| {
        let case = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let accounts: Vec<String> = (0..3).map(|a| format!("ingest-{case}-{a}")).collect();
        let mut models: Vec<Model> = (0..3).map(|_| Model::default()).collect();
        for id in &accounts {
            rt.block_on(put(&store, id, "free"));
        }
        for (round, (top_up, items)) in calls.iter().enumerate() {
            for (a, id) in accounts.iter().enumerate() {
                // Keys 100 and up are the top-ups', never a debit's.
                let op = Op::TopUp { amount: *top_up, key: 100 + round as u8 };
                prop_assert_eq!(rt.block_on(run(&store, id, &op)), models[a].apply(&op));
            }
            let requests: Vec<(AccountId, DebitRequest)> = items
                .iter()
                .map(|(a, op)| (acct(&accounts[*a]), debit_request(op)))
                .collect();
            let got = rt.block_on(engine.debit_many(&requests)).expect("ingest");
            prop_assert_eq!(got.len(), items.len());
            for (j, ((a, op), r)) in items.iter().zip(got).enumerate() {
                // The account as each answer shows it: where its debits so far left it.
                let shown = r.as_ref().ok().map(|m| {
                    let v = &m.account;
                    (v.balance, v.available, v.total_spent, v.suspended_at.is_some())
                });
                prop_assert_eq!(outcome(r), models[*a].apply(op), "call {} item {} {:?}", round, j, op);
                let m = &models[*a];
                if let Some(shown) = shown {
                    prop_assert_eq!(shown, (m.balance, m.balance, m.spent, m.suspended), "view of call {} item {}", round, j);
                }
            }
        }
        for (a, id) in accounts.iter().enumerate() {
            let got = rt.block_on(store.get_account(&acct(id))).unwrap();
            let m = &models[a];
            prop_assert_eq!((got.balance, got.total_credited, got.total_spent), (m.balance, m.credited, m.spent));
            prop_assert_eq!(got.suspended_at.is_some(), m.suspended);
        }
    });
    rt.block_on(assert_clean(&store));
}

#[test]
fn ingest_matches_the_single_debit_model_sqlite() {
    check_ingest(Backend::Sqlite, 24);
}

#[test]
fn ingest_matches_the_single_debit_model_postgres() {
    check_ingest(Backend::Postgres, 12);
}

#[test]
fn money_operations_match_the_model_sqlite() {
    check(Backend::Sqlite, 64, false);
}

#[test]
fn money_operations_match_the_model_postgres() {
    check(Backend::Postgres, 32, false);
}

#[test]
fn batched_debits_match_the_unbatched_model_sqlite() {
    check(Backend::Sqlite, 64, true);
}

#[test]
fn batched_debits_match_the_unbatched_model_postgres() {
    check(Backend::Postgres, 32, true);
}
