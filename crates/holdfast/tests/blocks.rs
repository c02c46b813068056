//! Credit blocks (issue #41): credits with an expiry, a priority and a category, drawn in
//! one order by debits (single, batched), holds and their captures, given back by job
//! refunds, taken back by top-up refunds, written off by the expiry pass; on SQLite and
//! PostgreSQL, with the audit (invariant 9: each block against its ledger) after each.

use holdfast::decide::{BlockAmount, BlockTerms, CreditCategory, GENERAL};
use holdfast::testing::*;
use holdfast::{
    CreditKind, Engine, JobRefund, MoneyResult, Refusal, StoreError, Usage, backend_test,
};

const HOUR: i64 = 3_600_000_000;

fn terms(priority: i64, expires_in: Option<i64>, now: i64) -> BlockTerms {
    BlockTerms {
        category: CreditCategory::Promotional,
        priority,
        expires_at: expires_in.map(|d| now + d),
    }
}

/// A credit of `amount` to `u` on `terms` under key `k`: its block's id (its entry's).
async fn block(e: &Engine, amount: &str, t: BlockTerms, k: &str) -> i64 {
    let r = credit(e, amount, t, k).await.unwrap();
    r.entry.entry_id
}

async fn credit(
    e: &Engine,
    amount: &str,
    t: BlockTerms,
    k: &str,
) -> Result<MoneyResult, StoreError> {
    (e.credit_on_terms(&acct("u"), usd(amount), CreditKind::Bonus, t, &key(k))).await
}

async fn debit(e: &Engine, amount: &str, k: &str) -> Result<MoneyResult, StoreError> {
    e.debit(&acct("u"), &Usage::Amount(usd(amount)), &key(k), None)
        .await
}

fn lines(pairs: &[(i64, &str)]) -> Vec<BlockAmount> {
    (pairs.iter())
        .map(|&(block, amount)| BlockAmount {
            block,
            amount: usd(amount).0,
        })
        .collect()
}

/// The blocks of `u` as its account shows them: (id, remaining, held).
async fn blocks_of(e: &Engine) -> Vec<(i64, i64, i64)> {
    let view = e.get_account(&acct("u")).await.unwrap();
    let b = view.blocks.iter();
    b.map(|b| (b.block_id, b.remaining, b.held)).collect()
}

/// A video job of `u` (it holds 0.50) submitted and leased: its id and lease token.
async fn leased_video(e: &Engine, k: &str) -> (String, String) {
    let job = e.submit(&submit_req("u", "video", k)).await.unwrap().job;
    let lease = e.lease("video", &worker(), 60).await.unwrap().unwrap();
    assert_eq!(lease.job.job_id, job.job_id);
    (job.job_id, lease.lease_token)
}

backend_test!(
    debits_draw_by_priority_expiry_and_age_then_into_debt_which_the_next_block_pays,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        top_up(e.store(), "u", "2.00", "t").await;
        let now = e.store().now().await.unwrap();
        let a = block(&e, "3.00", terms(10, Some(24 * HOUR), now), "a").await;
        let soon = block(&e, "1.00", terms(50, Some(HOUR), now), "b").await;
        let last = block(&e, "1.00", terms(60, None, now), "c").await;
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(view.balance, usd("7.00").0);
        let order: Vec<i64> = view.blocks.iter().map(|b| b.block_id).collect();
        assert_eq!(order, [a, soon, last]);

        let first = debit(&e, "3.50", "d1").await.unwrap();
        assert_eq!(first.entry.blocks, lines(&[(a, "3.00"), (soon, "0.50")]));
        // General money (priority 50, no expiry) comes after the expiring block of 50.
        let second = debit(&e, "3.50", "d2").await.unwrap();
        let want = lines(&[(soon, "0.50"), (GENERAL, "2.00"), (last, "1.00")]);
        assert_eq!(second.entry.blocks, want);
        assert!(blocks_of(&e).await.is_empty(), "every block is spent");
        // Past every block: debt within the buffer, from general money (an entry names
        // blocks while the account has some that hold money).
        let third = debit(&e, "0.80", "d3").await.unwrap();
        assert!(third.entry.blocks.is_empty());
        assert!(third.account.suspended_at.is_some());
        // A credit on terms pays the debt first; its block keeps the rest.
        let paid = credit(&e, "2.00", terms(20, None, now), "p").await.unwrap();
        let p = paid.entry.entry_id;
        assert_eq!(paid.entry.blocks, lines(&[(p, "1.20"), (GENERAL, "0.80")]));
        assert_eq!(blocks_of(&e).await, [(p, usd("1.20").0, 0)]);
        assert_eq!(paid.account.balance, usd("1.20").0);
        assert!(paid.account.suspended_at.is_none());
        // The ledger keeps what each entry moved; a replay answers the same entry.
        let again = debit(&e, "3.50", "d2").await.unwrap();
        assert!(again.replay);
        assert_eq!(again.entry.blocks, want);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_credits_terms_are_part_of_its_request_and_bad_terms_write_nothing,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        let now = e.store().now().await.unwrap();
        let first = credit(&e, "1.00", terms(10, None, now), "k").await.unwrap();
        let replay = credit(&e, "1.00", terms(10, None, now), "k").await.unwrap();
        assert!(replay.replay);
        assert_eq!(replay.entry, first.entry);
        let other = credit(&e, "1.00", terms(11, None, now), "k").await;
        assert_eq!(refused(other), Refusal::IdempotencyMismatch);
        for (bad, k) in [(terms(101, None, now), "b1"), (terms(-1, None, now), "b2")] {
            let r = credit(&e, "1.00", bad, k).await;
            assert!(matches!(refused(r), Refusal::InvalidRequest(m) if m.starts_with("priority")));
        }
        // An expiry already past makes a block expired from the start: not available.
        let past = credit(&e, "1.00", terms(10, Some(-HOUR), now), "b3")
            .await
            .unwrap();
        assert_eq!(past.account.available, usd("1.00").0);
        // General terms make no block: today's money.
        let plain = credit(&e, "1.00", BlockTerms::GENERAL, "g").await.unwrap();
        assert!(plain.entry.blocks.is_empty());
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!((view.balance, view.blocks.len()), (usd("3.00").0, 2));
        assert_eq!(e.expire_blocks(10).await.unwrap().processed, 1);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    a_hold_reserves_its_blocks_its_capture_takes_them_and_a_release_gives_them_back,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        top_up(e.store(), "u", "1.00", "t").await;
        let now = e.store().now().await.unwrap();
        let a = block(&e, "0.30", terms(10, None, now), "a").await;
        let (job, token) = leased_video(&e, "v1").await;
        let held = e.get_job(&job_id(&job)).await.unwrap().hold;
        assert_eq!(held[0].blocks, lines(&[(a, "0.30"), (GENERAL, "0.20")]));
        assert_eq!(blocks_of(&e).await, [(a, usd("0.30").0, usd("0.30").0)]);
        // A debit meanwhile draws only what is free: not the held block.
        let d = debit(&e, "0.80", "d1").await.unwrap();
        assert_eq!(d.entry.blocks, lines(&[(GENERAL, "0.80")]));
        // A partial capture takes the reserved sources in their order.
        let part = [holdfast::decide::PocketAmount {
            pocket: "money".into(),
            amount: usd("0.40").0,
            blocks: Vec::new(),
        }];
        let done = e
            .complete(&job_id(&job), &token, Some(&part))
            .await
            .unwrap();
        assert_eq!(
            done.charged[0].blocks,
            lines(&[(a, "0.30"), (GENERAL, "0.10")])
        );
        assert!(blocks_of(&e).await.is_empty());
        // A failed job releases its blocks whole.
        let b2 = block(&e, "0.60", terms(10, None, now), "b").await;
        let (job, token) = leased_video(&e, "v2").await;
        assert_eq!(blocks_of(&e).await, [(b2, usd("0.60").0, usd("0.50").0)]);
        e.fail(&job_id(&job), &token, Some("provider down"))
            .await
            .unwrap();
        assert_eq!(blocks_of(&e).await, [(b2, usd("0.60").0, 0)]);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    an_expired_block_is_not_drawn_and_the_pass_writes_off_all_but_what_a_job_holds,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        top_up(e.store(), "u", "0.50", "t").await;
        let now = e.store().now().await.unwrap();
        let x = block(&e, "1.00", terms(0, Some(HOUR), now), "x").await;
        let (job, token) = leased_video(&e, "v1").await;
        db.set_block_expiry(&[x], "1").await;
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(
            (view.balance, view.available),
            (usd("1.50").0, usd("0.50").0)
        );
        assert!(view.blocks[0].expired);
        // Not drawn: general money, then debt.
        let d = debit(&e, "0.60", "d1").await.unwrap();
        assert_eq!(d.entry.blocks, lines(&[(GENERAL, "0.60")]));
        let report = e.expire_blocks(100).await.unwrap();
        assert_eq!(report.processed, 1);
        let written = e.ledger(&acct("u"), None, 100).await.unwrap().items;
        let expiry = written.iter().find(|en| en.kind == "expiry").unwrap();
        assert_eq!(
            (expiry.delta, expiry.blocks.clone()),
            (-usd("0.50").0, lines(&[(x, "0.50")]))
        );
        assert_eq!(blocks_of(&e).await, [(x, usd("0.50").0, usd("0.50").0)]);
        let told = events_of(e.store(), "credit.expired", 1).await;
        assert_eq!(told[0].data["block_id"], x);
        // Nothing more to write off while the job holds the rest; its capture spends it.
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 0);
        let done = e.complete(&job_id(&job), &token, None).await.unwrap();
        assert_eq!(done.charged[0].blocks, lines(&[(x, "0.50")]));
        assert!(blocks_of(&e).await.is_empty());
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!(view.balance, -usd("0.10").0);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    refunds_take_back_from_the_top_ups_block_and_give_back_to_the_jobs,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        let now = e.store().now().await.unwrap();
        let paid = BlockTerms {
            category: CreditCategory::Paid,
            ..terms(10, None, now)
        };
        let r = e
            .credit_on_terms(&acct("u"), usd("2.00"), CreditKind::TopUp, paid, &key("p"))
            .await
            .unwrap();
        let p = r.entry.entry_id;
        debit(&e, "1.50", "d1").await.unwrap();
        let back = e
            .refund(&acct("u"), &key("p"), usd("2.00"), &key("r"))
            .await
            .unwrap();
        assert_eq!(back.entry.blocks, lines(&[(p, "0.50"), (GENERAL, "1.50")]));
        assert_eq!(back.account.balance, -usd("1.50").0);
        // A job charged from a block gets its refund back in it, even once emptied (the
        // block keeps 0.50 of 2.00: the rest pays the debt).
        let j = block(&e, "2.00", terms(10, None, now), "j").await;
        let (job, token) = leased_video(&e, "v1").await;
        e.complete(&job_id(&job), &token, None).await.unwrap();
        assert_eq!(blocks_of(&e).await, []);
        let refund = JobRefund {
            amount: Some(usd("0.30")),
            reason: "bad output".into(),
            key: key("jr1"),
        };
        let given = e.refund_job(&job_id(&job), &refund).await.unwrap();
        assert_eq!(given.entries[0].blocks, lines(&[(j, "0.30")]));
        assert_eq!(blocks_of(&e).await, [(j, usd("0.30").0, 0)]);
        let rest = JobRefund {
            amount: None,
            key: key("jr2"),
            ..refund
        };
        let given = e.refund_job(&job_id(&job), &rest).await.unwrap();
        assert_eq!(given.entries[0].blocks, lines(&[(j, "0.20")]));
        assert_eq!(blocks_of(&e).await, [(j, usd("0.50").0, 0)]);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    racing_debits_holds_and_credits_on_blocks_keep_every_block_to_its_ledger,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(50)).await;
        top_up(e.store(), "u", "5.00", "t").await;
        let now = e.store().now().await.unwrap();
        for (i, p) in [10, 50, 90].into_iter().enumerate() {
            block(
                &e,
                "3.00",
                terms(p, Some((i as i64 + 1) * HOUR), now),
                &format!("b{i}"),
            )
            .await;
        }
        let mut tasks = Vec::new();
        for i in 0..40 {
            let e = e.clone();
            tasks.push(tokio::spawn(async move {
                match i % 4 {
                    0 | 1 => debit(&e, "0.37", &format!("d{i}"))
                        .await
                        .map(|r| r.entry.blocks),
                    2 => e
                        .submit(&submit_req("u", "video", &format!("s{i}")))
                        .await
                        .map(|_| vec![]),
                    _ => credit(&e, "0.25", terms(30, None, now), &format!("c{i}"))
                        .await
                        .map(|r| r.entry.blocks),
                }
            }));
        }
        for t in tasks {
            match t.await.unwrap() {
                Ok(drawn) => {
                    assert!(drawn.iter().all(|l| l.amount > 0), "{drawn:?}");
                }
                Err(StoreError::Refused(
                    Refusal::InsufficientFunds | Refusal::AccountSuspended,
                )) => {}
                Err(other) => panic!("{other:?}"),
            }
        }
        // Every debit drew in order, each hold reserved, and the books say so.
        assert_clean(e.store()).await;
        let view = e.get_account(&acct("u")).await.unwrap();
        let in_blocks: i64 = view.blocks.iter().map(|b| b.remaining).sum();
        let held: i64 = view.blocks.iter().map(|b| b.held).sum();
        // General money never went past the buffer, and blocks hold no more than the holds.
        assert!(view.balance - in_blocks >= -view.buffer, "{view:?}");
        assert!(held <= view.held && view.held == view.open_jobs * usd("0.50").0);
    }
);

backend_test!(
    the_balance_at_a_time_shows_each_block_as_it_was,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        top_up(e.store(), "u", "1.00", "t").await;
        let now = e.store().now().await.unwrap();
        let a = block(&e, "2.00", terms(10, None, now), "a").await;
        let first = debit(&e, "0.50", "d1").await.unwrap().entry.created_at;
        leased_video(&e, "v1").await;
        let second = debit(&e, "1.20", "d2").await.unwrap().entry.created_at;
        // After the first debit: 1.50 left of the block; after the hold and the second,
        // the block held 0.50 and the second debit took the 1.00 free.
        let then = e.balance_at(&acct("u"), first).await.unwrap();
        let shown: Vec<(i64, i64)> = then
            .blocks
            .iter()
            .map(|b| (b.block_id, b.remaining))
            .collect();
        assert_eq!(shown, [(a, usd("1.50").0)]);
        let later = e.balance_at(&acct("u"), second).await.unwrap();
        let b = &later.blocks[0];
        assert_eq!((b.remaining, b.held), (usd("0.50").0, Some(usd("0.50").0)));
        assert_eq!(later.balance, usd("1.30").0);
        let before = e.balance_at(&acct("u"), now - 1).await.unwrap();
        assert!(before.blocks.is_empty());
        assert_clean(e.store()).await;
    }
);

backend_test!(
    the_pass_closes_spent_expired_blocks_and_a_job_refund_reopens_one_to_write_off,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        let now = e.store().now().await.unwrap();
        let x = block(&e, "0.50", terms(0, Some(HOUR), now), "x").await;
        let (job, token) = leased_video(&e, "v1").await;
        e.complete(&job_id(&job), &token, None).await.unwrap();
        db.set_block_expiry(&[x], "1").await;
        let closed = format!(
            "SELECT COUNT(*) FROM credit_blocks WHERE closed_at IS NOT NULL AND block_id = {x}"
        );
        // Spent before it expired: nothing to write off, and the pass closes it.
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 0);
        assert_eq!(db.query_i64(&closed).await, 1);
        // A job refund gives it money back: open again, and the next run writes it off.
        let refund = JobRefund {
            amount: None,
            reason: "bad output".into(),
            key: key("jr"),
        };
        e.refund_job(&job_id(&job), &refund).await.unwrap();
        assert_eq!(db.query_i64(&closed).await, 0);
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 1);
        assert_eq!(db.query_i64(&closed).await, 1);
        let view = e.get_account(&acct("u")).await.unwrap();
        assert_eq!((view.balance, view.blocks.len()), (0, 0));
        assert_clean(e.store()).await;
    }
);

backend_test!(
    credit_expiring_is_told_once_per_block_that_holds_money_within_the_cards_window,
    |b| async move {
        let mut card = holdfast::RateCard::builtin();
        card.timeouts.credit_expiring_notice_days = 1;
        let Some((db, e)) = engine_with(b, card).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        put(e.store(), "v", "free").await;
        let now = e.store().now().await.unwrap();
        let spent = block(&e, "0.30", terms(0, Some(2 * HOUR), now), "s").await;
        let soon = block(&e, "1.00", terms(10, Some(2 * HOUR), now), "a").await;
        let later = block(&e, "1.00", terms(20, Some(25 * HOUR), now), "b").await;
        block(&e, "1.00", terms(30, None, now), "c").await;
        debit(&e, "0.30", "d").await.unwrap();
        let other = e
            .credit_on_terms(
                &acct("v"),
                usd("2.00"),
                CreditKind::Bonus,
                terms(5, Some(HOUR), now),
                &key("v"),
            )
            .await
            .unwrap()
            .entry
            .entry_id;
        // Passes racing each other tell each block once.
        let runs = (0..8).map(|_| e.expire_blocks(100));
        let told: u64 = futures::future::join_all(runs)
            .await
            .into_iter()
            .map(|r| r.unwrap().processed)
            .sum();
        assert_eq!(told, 2);
        let events = events_of(e.store(), "credit.expiring", 2).await;
        let mut named: Vec<(String, i64)> = (events.iter())
            .map(|ev| (ev.account_id.clone(), ev.data["block_id"].as_i64().unwrap()))
            .collect();
        named.sort();
        assert_eq!(named, [("u".to_owned(), soon), ("v".to_owned(), other)]);
        let of_soon = events
            .iter()
            .find(|ev| ev.data["block_id"] == soon)
            .unwrap();
        assert_eq!(of_soon.data["remaining_micros"], usd("1.00").0);
        assert_eq!(of_soon.data["category"], "promotional");
        assert!(of_soon.data["expires_at"].as_str().unwrap().ends_with('Z'));
        assert_ne!(spent, soon);
        // The later block comes into the window: told by the next run, once.
        db.set_block_expiry(&[later], &format!("expires_at - {}", 2 * HOUR))
            .await;
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 1);
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 0);
        let events = events_of(e.store(), "credit.expiring", 3).await;
        assert_eq!(events.len(), 3);
        assert_clean(e.store()).await;
    }
);

backend_test!(
    no_credit_expiring_when_the_card_sets_zero_days,
    |b| async move {
        let mut card = holdfast::RateCard::builtin();
        card.timeouts.credit_expiring_notice_days = 0;
        let Some((_db, e)) = engine_with(b, card).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        let now = e.store().now().await.unwrap();
        block(&e, "1.00", terms(10, Some(HOUR), now), "a").await;
        assert_eq!(e.expire_blocks(100).await.unwrap().processed, 0);
        let filter = holdfast::EventFilter {
            limit: 10,
            event_type: Some("credit.expiring".into()),
            ..Default::default()
        };
        assert!(e.store().events(&filter).await.unwrap().items.is_empty());
    }
);

backend_test!(
    reconciliation_checks_each_block_against_its_ledger_lines_and_open_holds,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(5)).await;
        let now = e.store().now().await.unwrap();
        let a = block(&e, "2.00", terms(10, None, now), "a").await;
        debit(&e, "0.30", "d1").await.unwrap();
        leased_video(&e, "v1").await;
        let clean = e.reconcile(10).await.unwrap();
        assert_eq!((clean.processed, clean.adjusted, clean.drifted), (1, 0, 0));
        // From its checkpoint on: more entries, and a block made after the first run.
        let c = block(&e, "1.00", terms(5, Some(24 * HOUR), now), "c").await;
        debit(&e, "1.50", "d2").await.unwrap();
        assert_eq!(e.reconcile(10).await.unwrap().drifted, 0);
        // A block whose stored figures left their sources is reported, each figure once,
        // and nothing is written to the money (the balance's own total still agrees).
        db.execute(&format!(
            "UPDATE credit_blocks SET remaining = remaining + 70000, held = 0 WHERE block_id = {a}"
        ))
        .await;
        let before = e.ledger(&acct("u"), None, 100).await.unwrap().items.len();
        let drifted = e.reconcile(10).await.unwrap();
        assert_eq!((drifted.adjusted, drifted.drifted), (0, 2));
        assert_eq!(
            e.ledger(&acct("u"), None, 100).await.unwrap().items.len(),
            before
        );
        db.execute(&format!(
            "UPDATE credit_blocks SET remaining = remaining - 70000, held = 500000 WHERE block_id = {a}"
        ))
        .await;
        assert_eq!(e.reconcile(10).await.unwrap().drifted, 0);
        assert_ne!(a, c);
        assert_clean(e.store()).await;
        // The live blocks an account's row keeps for its locks are audited against the
        // blocks' rows too.
        behind_the_back(
            &db,
            "UPDATE accounts SET live_blocks = '[]' WHERE account_id = 'u'",
        )
        .await;
        let broken = e.store().audit().await.unwrap();
        assert!(
            broken
                .iter()
                .any(|v| v.invariant == 10 && v.message.contains("live blocks")),
            "{broken:#?}"
        );
    }
);

backend_test!(
    racing_expiry_refunds_and_debits_on_blocks_keep_every_block_to_its_ledger,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(50)).await;
        let now = e.store().now().await.unwrap();
        let paid = |priority| BlockTerms {
            category: CreditCategory::Paid,
            ..terms(priority, Some(HOUR), now)
        };
        let mut made = Vec::new();
        for i in 0..4 {
            let k = format!("p{i}");
            let r = e
                .credit_on_terms(
                    &acct("u"),
                    usd("1.00"),
                    CreditKind::TopUp,
                    paid(10 + i),
                    &key(&k),
                )
                .await
                .unwrap();
            made.push(r.entry.entry_id);
        }
        block(&e, "3.00", terms(90, None, now), "rest").await;
        let mut jobs = Vec::new();
        for i in 0..4 {
            let (job, token) = leased_video(&e, &format!("v{i}")).await;
            e.complete(&job_id(&job), &token, None).await.unwrap();
            jobs.push(job);
        }
        // Two of the top-ups' blocks expire now, with what is left in them.
        db.set_block_expiry(&made[2..], "1").await;
        let mut tasks = Vec::new();
        for i in 0..40 {
            let (e, jobs) = (e.clone(), jobs.clone());
            tasks.push(tokio::spawn(async move {
                let k = key(&format!("k{i}"));
                match i % 5 {
                    0 => e.expire_blocks(100).await.map(|_| ()),
                    1 => debit(&e, "0.21", &format!("d{i}")).await.map(|_| ()),
                    2 => (e.refund(&acct("u"), &key(&format!("p{}", i % 4)), usd("0.40"), &k))
                        .await
                        .map(|_| ()),
                    3 => {
                        let refund = JobRefund {
                            amount: Some(usd("0.20")),
                            reason: "race".into(),
                            key: k,
                        };
                        e.refund_job(&job_id(&jobs[i % 4]), &refund)
                            .await
                            .map(|_| ())
                    }
                    _ => (e.submit(&submit_req("u", "video", &format!("s{i}"))).await).map(|_| ()),
                }
            }));
        }
        let mut done = [0; 5];
        for (i, t) in tasks.into_iter().enumerate() {
            match t.await.unwrap() {
                Ok(()) => done[i % 5] += 1,
                Err(StoreError::Refused(_)) => {}
                Err(other) => panic!("{other:?}"),
            }
        }
        // Every kind of change took part: passes, debits, top-up and job refunds, holds.
        assert!(done.iter().all(|&n| n > 0), "{done:?}");
        e.expire_blocks(100).await.unwrap();
        assert_clean(e.store()).await;
        // The expired blocks keep at most what open holds reserved of them.
        let view = e.get_account(&acct("u")).await.unwrap();
        for gone in &made[2..] {
            if let Some(b) = view.blocks.iter().find(|b| b.block_id == *gone) {
                assert_eq!(b.remaining, b.held, "{b:?}");
            }
        }
        assert_eq!(e.reconcile(10).await.unwrap().drifted, 0);
        let expired = events_of(e.store(), "credit.expired", 2).await;
        assert!(expired.len() >= 2, "{expired:?}");
    }
);
