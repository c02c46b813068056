//! Accounts as operators find and stop them: listing by id prefix, plan and status, and
//! bans (queued jobs canceled, submits and debits refused, running jobs allowed to end),
//! on SQLite and PostgreSQL, each scenario followed by the audit.

use holdfast::core::refusal::Known;
use holdfast::testing::*;
use holdfast::{
    AccountFilter, AccountStatus, JobStatus, Micros, Refusal, StoreError, Usage, backend_test,
};

fn filter(limit: i64) -> AccountFilter {
    AccountFilter {
        limit,
        ..AccountFilter::default()
    }
}

backend_test!(
    the_listing_filter_and_the_status_shown_are_one_rule,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        // Every combination of the three marks, set behind the engine's back (no path
        // sets a ban and a block at once on a suspended account in one step).
        let mut marked = Vec::new();
        for bits in 0..8_u8 {
            let id = format!("m{bits}");
            put(e.store(), &id, "free").await;
            let mark = |bit: u8| (bits & bit != 0).then_some(1_i64);
            let marks = holdfast::StatusMarks {
                suspended_at: mark(1),
                blocked_at: mark(2),
                banned_at: mark(4),
            };
            let set = |m: Option<i64>| m.map_or("NULL".to_owned(), |t| t.to_string());
            let sql = format!(
                "UPDATE accounts SET suspended_at = {}, blocked_at = {}, banned_at = {} \
                 WHERE account_id = '{id}'",
                set(marks.suspended_at),
                set(marks.blocked_at),
                set(marks.banned_at)
            );
            behind_the_back(&db, &sql).await;
            marked.push((id, marks));
        }
        for (id, marks) in &marked {
            let view = e.get_account(&acct(id)).await.unwrap();
            assert_eq!(view.status(), AccountStatus::of(*marks), "{id}");
        }
        for status in AccountStatus::ALL {
            let f = AccountFilter {
                status: Some(status),
                ..filter(100)
            };
            let listed: Vec<String> = e
                .list_accounts(&f)
                .await
                .unwrap()
                .accounts
                .into_iter()
                .map(|a| a.account_id)
                .collect();
            let expected: Vec<String> = marked
                .iter()
                .filter(|(_, marks)| status.holds_for(*marks))
                .map(|(id, _)| id.clone())
                .collect();
            assert_eq!(listed, expected, "{status:?}");
        }
    }
);

backend_test!(
    accounts_are_listed_by_prefix_plan_and_status,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store();
        for i in 0..7 {
            put(s, &format!("team-a:{i}"), "free").await;
        }
        for i in 0..3 {
            put(s, &format!("team-b:{i}"), "premium").await;
        }
        e.set_blocked(&acct("team-a:3"), true).await.unwrap();
        s.debit(
            &acct("team-b:1"),
            &Usage::Amount(Micros(10)),
            &key("d"),
            None,
        )
        .await
        .unwrap();
        e.ban(&acct("team-a:5"), "fraud").await.unwrap();
        // Paging in id order through everything.
        let mut seen = Vec::new();
        let mut f = filter(4);
        loop {
            let page = e.list_accounts(&f).await.unwrap();
            if page.accounts.is_empty() {
                assert_eq!(page.next, f.after.as_ref().map(|a| a.to_string()));
                break;
            }
            seen.extend(page.accounts.iter().map(|a| a.account_id.clone()));
            f.after = page.next.as_deref().map(acct);
        }
        let mut sorted = seen.clone();
        sorted.sort();
        assert_eq!((seen.len(), &seen), (10, &sorted));
        let ids = |f: AccountFilter| {
            let e = e.clone();
            async move {
                let page = e.list_accounts(&f).await.unwrap();
                page.accounts
                    .into_iter()
                    .map(|a| a.account_id)
                    .collect::<Vec<_>>()
            }
        };
        let prefixed = AccountFilter {
            prefix: Some("team-b".into()),
            ..filter(100)
        };
        assert_eq!(ids(prefixed).await, ["team-b:0", "team-b:1", "team-b:2"]);
        let premium = AccountFilter {
            plan: Some("premium".into()),
            status: Some(AccountStatus::Active),
            ..filter(100)
        };
        assert_eq!(ids(premium).await, ["team-b:0", "team-b:2"]);
        for (status, expect) in [
            (AccountStatus::Suspended, vec!["team-b:1"]),
            (AccountStatus::Blocked, vec!["team-a:3"]),
            (AccountStatus::Banned, vec!["team-a:5"]),
        ] {
            let f = AccountFilter {
                status: Some(status),
                ..filter(100)
            };
            assert_eq!(ids(f).await, expect, "{status:?}");
        }
        let after_prefix = AccountFilter {
            prefix: Some("team-a".into()),
            after: Some(acct("team-a:4")),
            ..filter(100)
        };
        assert_eq!(ids(after_prefix).await, ["team-a:5", "team-a:6"]);
        let listed = e.list_accounts(&filter(1)).await.unwrap().accounts;
        assert_eq!(listed[0], e.get_account(&acct("team-a:0")).await.unwrap());
        let unknown = AccountFilter {
            plan: Some("gold".into()),
            ..filter(10)
        };
        assert_eq!(
            refused(e.list_accounts(&unknown).await),
            Refusal::UnknownPlan("gold".into(), Known(vec!["free".into(), "premium".into()]))
        );
        assert_clean(s).await;
    }
);

backend_test!(
    a_ban_cancels_the_queue_and_lets_running_jobs_end,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        let s = e.store();
        put_limited(s, "u", "free", Some(5)).await;
        top_up(s, "u", "5.00", "t").await;
        let mut jobs = Vec::new();
        for i in 0..3 {
            jobs.push(
                e.submit(&submit_req("u", "video", &format!("v{i}")))
                    .await
                    .unwrap()
                    .job,
            );
        }
        let running = e.lease("video", &worker(), 60).await.unwrap().unwrap();
        assert_eq!(running.job.job_id, jobs[0].job_id);
        assert_eq!(e.get_account(&acct("u")).await.unwrap().held, 1_500_000);
        let banned = e.ban(&acct("u"), "chargeback fraud").await.unwrap();
        assert!(banned.account.banned_at.is_some());
        let canceled: Vec<&str> = banned.canceled.iter().map(|j| j.job_id.as_str()).collect();
        assert_eq!(canceled, [jobs[1].job_id.as_str(), jobs[2].job_id.as_str()]);
        assert!(
            banned
                .canceled
                .iter()
                .all(|j| j.status == JobStatus::Canceled && j.charged.is_empty())
        );
        assert_eq!(
            banned.account.held, 500_000,
            "only the running job still holds"
        );
        assert_eq!(
            refused(e.submit(&submit_req("u", "video", "v9")).await),
            Refusal::AccountBanned
        );
        let debit = s
            .debit(&acct("u"), &Usage::Amount(usd("0.01")), &key("d"), None)
            .await;
        assert_eq!(refused(debit), Refusal::AccountBanned);
        // The running job ends and is billed.
        let done = e
            .complete(&job_id(&running.job.job_id), &running.lease_token, None)
            .await
            .unwrap();
        assert_eq!(done.status, JobStatus::Succeeded);
        let a = e.get_account(&acct("u")).await.unwrap();
        assert_eq!((a.balance, a.held), (4_500_000, 0));
        // Banning again changes nothing; the event says why, once.
        let again = e.ban(&acct("u"), "again").await.unwrap();
        assert_eq!(again.account.banned_at, banned.account.banned_at);
        assert!(again.canceled.is_empty());
        let events = events_of(s, "account.banned", 1).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data["reason"], "chargeback fraud");
        assert_eq!(events[0].data["canceled_jobs"].as_array().unwrap().len(), 2);
        let unbanned = e.unban(&acct("u")).await.unwrap();
        assert_eq!(unbanned.banned_at, None);
        e.submit(&submit_req("u", "video", "v10")).await.unwrap();
        assert_eq!(events_of(s, "account.unbanned", 1).await.len(), 1);
        assert_eq!(
            refused(e.ban(&acct("nobody"), "x").await),
            Refusal::AccountNotFound
        );
        assert!(matches!(
            refused(e.ban(&acct("u"), "").await),
            Refusal::InvalidRequest(_)
        ));
        assert_clean(s).await;
    }
);

backend_test!(
    a_ban_racing_submits_and_debits_leaves_nothing_queued,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        put_limited(e.store(), "u", "free", Some(100)).await;
        top_up(e.store(), "u", "50.00", "t").await;
        let tasks: Vec<_> = (0..30)
            .map(|i| {
                let e = e.clone();
                tokio::spawn(async move {
                    match i {
                        10 => e.ban(&acct("u"), "abuse").await.map(|_| 0),
                        i if i % 2 == 0 => {
                            let req = submit_req("u", "video", &format!("v{i}"));
                            e.submit(&req).await.map(|_| 0)
                        }
                        i => {
                            let k = key(&format!("d{i}"));
                            e.debit(&acct("u"), &Usage::Amount(usd("0.10")), &k, None)
                                .await
                                .map(|_| 1)
                        }
                    }
                })
            })
            .collect();
        let mut debited = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(n) => debited += n,
                Err(StoreError::Refused(Refusal::AccountBanned)) => {}
                Err(other) => panic!("unexpected {other}"),
            }
        }
        let a = e.get_account(&acct("u")).await.unwrap();
        assert!(a.banned_at.is_some());
        assert_eq!(
            a.balance,
            50_000_000 - debited * 100_000,
            "only the debits answered applied"
        );
        assert_eq!(
            (a.held, a.open_jobs),
            (0, 0),
            "every queued job was canceled"
        );
        let queued = e
            .list_jobs(&holdfast::JobFilter {
                lane: None,
                status: Some(JobStatus::Queued),
                account_id: Some("u".into()),
                limit: 100,
            })
            .await
            .unwrap();
        assert!(queued.is_empty());
        let events = events_of(e.store(), "account.banned", 1).await;
        let canceled = events[0].data["canceled_jobs"].as_array().unwrap().len();
        let every = holdfast::JobFilter {
            lane: None,
            status: None,
            account_id: Some("u".into()),
            limit: 100,
        };
        let submitted = e.list_jobs(&every).await.unwrap().len();
        assert_eq!(submitted, canceled, "every job that got in was canceled");
        assert_clean(e.store()).await;
    }
);
