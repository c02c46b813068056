//! The books across accounts: an export of a range is exactly the accounts' ledger pages
//! of that range, in entry order, on SQLite and PostgreSQL.

use holdfast::testing::*;
use holdfast::{Engine, LedgerEntry, LedgerFilter, Refusal, Usage, backend_test};

/// Every page of an export, `limit` at a time.
async fn export_all(e: &Engine, mut filter: LedgerFilter) -> Vec<LedgerEntry> {
    let mut out = Vec::new();
    loop {
        let page = e.export_ledger(&filter).await.unwrap();
        if page.items.is_empty() {
            return out;
        }
        out.extend(page.items);
        filter.after = page.next;
    }
}

/// Every entry of every account, from the accounts' own ledger pages, in entry order.
async fn ledgers(e: &Engine, accounts: &[&str]) -> Vec<LedgerEntry> {
    let mut all = Vec::new();
    for a in accounts {
        let mut after = None;
        loop {
            let page = e.ledger(&acct(a), after, 5).await.unwrap();
            if page.items.is_empty() {
                break;
            }
            after = page.next;
            all.extend(page.items);
        }
    }
    all.sort_by_key(|l| l.entry_id);
    all
}

backend_test!(
    an_export_of_a_range_is_the_ledger_pages_of_that_range,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let accounts = ["a", "b", "c"];
        for (i, a) in accounts.iter().enumerate() {
            put(e.store(), a, "free").await;
            top_up(e.store(), a, "5.00", &format!("t{i}")).await;
        }
        for i in 0..30 {
            let a = accounts[i % 3];
            let k = key(&format!("d{i}"));
            e.debit(&acct(a), &Usage::Amount(usd("0.01")), &k, Some("run,\"x\""))
                .await
                .unwrap();
        }
        let all = ledgers(&e, &accounts).await;
        let every = LedgerFilter {
            limit: 7,
            ..LedgerFilter::default()
        };
        assert_eq!(export_all(&e, every.clone()).await, all);
        // A time range in the middle: entries written in [since, until).
        let (since, until) = (all[10].created_at, all[30].created_at);
        let in_range: Vec<LedgerEntry> = all
            .iter()
            .filter(|l| l.created_at >= since && l.created_at < until)
            .cloned()
            .collect();
        assert!(!in_range.is_empty() && in_range.len() < all.len());
        let range = LedgerFilter {
            since: Some(since),
            until: Some(until),
            ..every.clone()
        };
        assert_eq!(export_all(&e, range.clone()).await, in_range);
        assert_eq!(
            e.count_ledger_export(&range).await.unwrap(),
            in_range.len() as u64
        );
        let one = LedgerFilter {
            account_id: Some(acct("b")),
            kind: Some("debit".into()),
            ..every.clone()
        };
        let b_debits: Vec<LedgerEntry> = all
            .iter()
            .filter(|l| l.account_id == "b" && l.kind == "debit")
            .cloned()
            .collect();
        assert_eq!(b_debits.len(), 10);
        assert_eq!(export_all(&e, one).await, b_debits);
        let bad_kind = LedgerFilter {
            kind: Some("gift".into()),
            ..every.clone()
        };
        assert!(matches!(
            refused(e.export_ledger(&bad_kind).await),
            Refusal::InvalidRequest(_)
        ));
        let backwards = LedgerFilter {
            since: Some(until),
            until: Some(since),
            ..every
        };
        assert!(matches!(
            refused(e.export_ledger(&backwards).await),
            Refusal::InvalidRequest(_)
        ));
    }
);
