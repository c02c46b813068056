//! The rate card is the authority, and a card that no longer covers live data is refused
//! at start, naming what is missing.

use holdfast::testing::*;
use holdfast::{PoolOptions, RateCard, StoreError, backend_test};
use holdfast_store::Store;

async fn reopen(db: &TestDb, card: RateCard) -> Result<Store, StoreError> {
    Store::open(&db.url, card, &PoolOptions::default()).await
}

backend_test!(a_card_that_drops_a_plan_in_use_is_refused, |b| async move {
    let Some((db, e)) = engine(b).await else {
        return;
    };
    put(e.store(), "p", "premium").await;
    e.store().pool().close().await;
    let without_premium = card_with(&[
        (
            "[plans.premium]\nbuffer = \"1.00\"\nmax_concurrent_jobs = 1\npriority = true                    # jobs go to \"<lane>_priority\"\nallowances = { daily_images = 10 }\n",
            "",
        ),
        (
            "free_for = [\"premium\"]             # these plans hold nothing for this kind",
            "",
        ),
    ]);
    assert!(!without_premium.plans.contains_key("premium"));
    match reopen(&db, without_premium).await {
        Err(StoreError::Config(msg)) => assert!(msg.contains("plan \"premium\""), "{msg}"),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a card without a plan in use was accepted"),
    }
    // The full card still opens, and the account is as it was.
    let store = reopen(&db, RateCard::builtin()).await.unwrap();
    assert_eq!(store.get_account(&acct("p")).await.unwrap().plan, "premium");
});

backend_test!(
    a_card_that_drops_a_lane_with_open_jobs_is_refused,
    |b| async move {
        let Some((db, e)) = engine(b).await else {
            return;
        };
        put(e.store(), "u", "free").await;
        e.submit(&submit_req("u", "ci", "k")).await.unwrap();
        e.store().pool().close().await;
        let card = card_with(&[(
            "[kinds.ci]\nlane = \"runners\"",
            "[kinds.ci]\nlane = \"builders\"",
        )]);
        match reopen(&db, card).await {
            Err(StoreError::Config(msg)) => assert!(msg.contains("lane \"runners\""), "{msg}"),
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("a card without a lane in use was accepted"),
        }
    }
);
