//! The OpenAPI document's frame: its title and description, the bearer scheme, the error
//! body. The paths and their schemas come from the handlers' annotations, added by the
//! route list in `mod.rs` as the router is built from it ([`super::document`]);
//! `tests/http_ops.rs` checks the document lists exactly the routes served.

use utoipa::Modify;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use super::error::ErrorBody;

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
                        "An API key: `service`, `worker`, `admin` or `viewer` (API.md \"Auth\")",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document without its paths.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "holdfast",
        description = "Charge exactly once for asynchronous paid work. Errors are \
            `{\"error\": {\"code\", \"message\"}}`; unknown routes answer 404 `route_not_found`, \
            a wrong method 405 `method_not_allowed`."
    ),
    components(schemas(ErrorBody)),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;
