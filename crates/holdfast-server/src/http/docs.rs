//! The OpenAPI document, generated from the handlers' annotations and the wire types.
//! `tests/http_openapi.rs` checks it lists exactly the routes the router serves.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoResponses, Modify, OpenApi};

use super::error::ErrorBody;
use super::{accounts, admin, events, jobs, money, workers};

/// The errors any keyed endpoint can answer.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum AuthErrors {
    /// `unauthorized`: no key, or not a live key.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// `forbidden`: the key's role may not call this; or `account_blocked` /
    /// `account_suspended` where a submit is refused.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// `payload_too_large`: the body is over 64 KiB.
    #[response(status = 413)]
    PayloadTooLarge(ErrorBody),
    /// `database_unavailable`: the database did not answer in time.
    #[response(status = 503)]
    Unavailable(ErrorBody),
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API key: `service`, `worker` or `admin` (API.md \"Auth\")",
                    ))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "holdfast",
        description = "Charge exactly once for asynchronous paid work. Errors are \
            `{\"error\": {\"code\", \"message\"}}`; unknown routes answer 404 `route_not_found`, \
            a wrong method 405 `method_not_allowed`."
    ),
    paths(
        accounts::put_account,
        accounts::get_account,
        accounts::activity,
        accounts::block,
        accounts::unblock,
        money::top_up,
        money::debit,
        money::refund,
        money::ledger,
        jobs::submit,
        jobs::get_job,
        jobs::cancel,
        workers::lease,
        workers::heartbeat,
        workers::complete,
        workers::fail,
        events::list,
        admin::sweep,
        admin::reconcile,
        admin::reactivate,
        admin::audit,
        admin::healthz,
        admin::metrics,
        admin::openapi,
    ),
    components(schemas(ErrorBody)),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

/// The document served at `/openapi.json`.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
