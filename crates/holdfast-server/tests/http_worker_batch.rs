//! Batched worker calls over HTTP on SQLite and PostgreSQL: a lease of several jobs, and
//! complete / fail of many jobs per call, each item answered as the single call would
//! be; raced against single calls on the same jobs; the audit clean after each.

mod http_support;

use holdfast::backend_test;
use http_support::*;
use serde_json::{Value, json};

/// An account on the free plan allowed 100 open jobs, with 10.00 on it.
async fn account_for_jobs(api: &Api, id: &str) {
    let body = json!({"plan": "free", "max_concurrent_jobs": 100});
    api.put(&api.service, &format!("/v1/accounts/{id}"), body)
        .await
        .expect(201, "");
    api.top_up(id, "10.00", "t").await;
}

/// Submits `n` video jobs (0.50 held each) for `account`.
async fn submit_videos(api: &Api, account: &str, n: usize) {
    for i in 0..n {
        api.submit(account, "video", &format!("{account}-v{i}"))
            .await
            .expect(201, "");
    }
}

/// Leases with `max_jobs`: the (job_id, lease_token) pairs handed out.
async fn lease_many(api: &Api, max_jobs: i64) -> Vec<(String, String)> {
    let body = json!({"worker_id": "w1", "lease_seconds": 60, "max_jobs": max_jobs});
    let r = api.post(&api.worker, "/v1/lanes/video/lease", body).await;
    r.expect(200, "")["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["job"]["job_id"].as_str().unwrap().to_owned(),
                l["lease_token"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

backend_test!(
    lease_several_then_complete_and_fail_in_batches,
    |b| async move {
        let Some(api) = api(b).await else { return };
        account_for_jobs(&api, "a").await;
        submit_videos(&api, "a", 6).await;
        let first = lease_many(&api, 4).await;
        let rest = lease_many(&api, 4).await;
        assert_eq!((first.len(), rest.len()), (4, 2));
        assert!(
            lease_many(&api, 3).await.is_empty(),
            "nothing left: an empty list"
        );
        let jobs: Vec<_> = first.iter().chain(&rest).cloned().collect();
        let ids: std::collections::HashSet<_> = jobs.iter().map(|(j, _)| j.clone()).collect();
        assert_eq!(ids.len(), 6, "each job leased once");

        let item = |i: usize| json!({"job_id": jobs[i].0, "lease_token": jobs[i].1});
        let items = json!([
            item(0),
            {"job_id": jobs[1].0, "lease_token": jobs[1].1, "capture": [{"pocket": "money", "amount": "0.20"}]},
            {"job_id": jobs[2].0, "lease_token": "not-the-token"},
            {"job_id": "no-such-job", "lease_token": "x"},
            {"job_id": jobs[3].0, "lease_token": jobs[3].1, "capture": [{"pocket": "money", "amount": "0.51"}]},
            {"job_id": jobs[3].0},
            item(0),
        ]);
        let r = api
            .post(&api.worker, "/v1/jobs/complete", json!({ "items": items }))
            .await;
        let body = r.expect(200, "").clone();
        assert_eq!(statuses(&body), vec![200, 200, 409, 404, 422, 422, 200]);
        let res = body["results"].as_array().unwrap();
        assert_eq!(res[0]["job"]["status"], "succeeded");
        assert_eq!(res[1]["job"]["charged"][0]["amount"], "0.20");
        assert_eq!(res[2]["error"]["code"], "lease_lost");
        assert_eq!(res[3]["error"]["code"], "job_not_found");
        assert_eq!(res[4]["error"]["code"], "invalid_request");
        let missing = res[5]["error"]["message"].as_str().unwrap();
        assert!(
            missing.starts_with("items[5]: missing field `lease_token`"),
            "{missing}"
        );
        // The same complete again, with its token: the same job, nothing more charged.
        assert_eq!(res[6]["job"], res[0]["job"]);

        let fails = json!([
            {"job_id": jobs[2].0, "lease_token": jobs[2].1, "reason": "provider timeout"},
            {"job_id": jobs[3].0, "lease_token": jobs[3].1, "reason": "x".repeat(5000)},
            {"job_id": jobs[4].0, "lease_token": jobs[4].1},
        ]);
        let r = api
            .post(&api.worker, "/v1/jobs/fail", json!({ "items": fails }))
            .await;
        let body = r.expect(200, "").clone();
        assert_eq!(statuses(&body), vec![200, 422, 200]);
        assert_eq!(body["results"][0]["job"]["status"], "failed");
        // Charged 0.50 + 0.20; jobs 3 and 5 still hold 0.50 each.
        let a = api.get_account("a").await;
        assert_eq!(
            (a["balance"].as_str(), a["held"].as_str()),
            (Some("9.30"), Some("1.00"))
        );
        api.assert_clean().await;
    }
);

backend_test!(a_malformed_batch_does_nothing, |b| async move {
    let Some(api) = api(b).await else { return };
    account_for_jobs(&api, "a").await;
    submit_videos(&api, "a", 1).await;
    let (job, token) = lease_many(&api, 1).await.remove(0);
    let one = json!({"job_id": job, "lease_token": token});
    let many: Vec<Value> = (0..101).map(|_| one.clone()).collect();
    for path in ["/v1/jobs/complete", "/v1/jobs/fail"] {
        for body in [
            json!({}),
            json!({"items": []}),
            json!({"items": many}),
            json!({"items": [one], "x": 1}),
        ] {
            api.post(&api.worker, path, body)
                .await
                .expect(422, "invalid_request");
        }
        api.post(&api.service, path, json!({"items": [one]}))
            .await
            .expect(403, "forbidden");
    }
    for max_jobs in [0, 101] {
        let body = json!({"worker_id": "w1", "max_jobs": max_jobs});
        let r = api.post(&api.worker, "/v1/lanes/video/lease", body).await;
        r.expect(422, "invalid_request");
    }
    let j = api.get(&api.worker, &format!("/v1/jobs/{job}")).await;
    assert_eq!(
        j.expect(200, "")["status"],
        "in_progress",
        "nothing was done"
    );
    api.assert_clean().await;
});

backend_test!(
    batched_and_single_completes_race_each_job_charged_once,
    |b| async move {
        let Some(api) = api(b).await else { return };
        account_for_jobs(&api, "r").await;
        submit_videos(&api, "r", 20).await;
        let jobs = lease_many(&api, 20).await;
        assert_eq!(jobs.len(), 20);
        let items: Vec<Value> = jobs
            .iter()
            .map(|(j, t)| json!({"job_id": j, "lease_token": t}))
            .collect();
        let mut calls = Vec::new();
        for _ in 0..4 {
            let (client, url, key) = (
                api.client.clone(),
                api.url("/v1/jobs/complete"),
                api.worker.clone(),
            );
            let body = json!({ "items": items });
            calls.push(tokio::spawn(async move {
                let r = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let body: Value = r.json().await.unwrap();
                statuses(&body)
            }));
        }
        for (j, t) in &jobs {
            let (client, key) = (api.client.clone(), api.worker.clone());
            let url = api.url(&format!("/v1/jobs/{j}/complete"));
            let body = json!({ "lease_token": t });
            calls.push(tokio::spawn(async move {
                let r = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                vec![u64::from(r.status().as_u16())]
            }));
        }
        for call in calls {
            for status in call.await.unwrap() {
                // A repeat of the complete that finished a job answers 200 with that job.
                assert_eq!(status, 200);
            }
        }
        let ledger = api
            .get(&api.service, "/v1/accounts/r/ledger?limit=1000")
            .await;
        let captures: Vec<&str> = ledger.expect(200, "")["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "capture")
            .map(|e| e["ref"].as_str().unwrap())
            .collect();
        let once: std::collections::HashSet<_> = captures.iter().collect();
        assert_eq!(
            (captures.len(), once.len()),
            (20, 20),
            "each job captured exactly once"
        );
        let a = api.get_account("r").await;
        assert_eq!(
            (a["balance"].as_str(), a["held"].as_str()),
            (Some("0.00"), Some("0.00"))
        );
        api.assert_clean().await;
    }
);
