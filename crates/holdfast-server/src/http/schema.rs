//! The formats the service checks, as schemas of the OpenAPI document, so that a request
//! valid by the document is one the service takes (apart from business refusals: money,
//! state, names of the rate card). Patterns and lengths come from the code that checks
//! them (`holdfast_core`'s `PATTERN`s, pinned to their parsers by tests there).
//!
//! Request fields name these types with `#[schema(value_type = …)]`; parameters get
//! theirs by name in [`refine`], since a parameter's name always means the same thing
//! (`account_id`, `limit`, …). Names from the rate card (kinds, plans, meters, pockets,
//! lanes) are strings with a `holdfast-*` format in the card-free document ([`finish`],
//! committed as `docs/openapi.json`); the document a server serves ([`with_card`]) adds the
//! card's names to each as an `enum` and the card's longest lease as a `maximum`, so any
//! tool sees what that server checks.

use std::borrow::Cow;

use super::extract::MAX_WHOLE;
use super::money::MAX_USAGE_SECONDS;
use holdfast::ENTRY_KINDS;
use holdfast::core::money::{AMOUNT_PATTERN, POSITIVE_AMOUNT_PATTERN};
use holdfast::core::ratecard::EVENT_TYPES;
use holdfast::core::ratecard::RateCard;
use holdfast::{
    AccountId, AccountStatus, IdempotencyKey, JobId, JobStatus, MAX_PAGE, UsageGrouping, WorkerId,
};
use serde_json::{Value, json};
use utoipa::openapi::path::{Operation, ParameterIn, PathItem};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::{PartialSchema, ToSchema};

fn text(min: usize, max: usize, pattern: Option<&str>, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(pattern)
        .description(Some(description))
}

fn custom_format(name: &str, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .format(Some(SchemaFormat::Custom(name.into())))
        .description(Some(description))
}

/// Declares a schema type of the document: its name there and how it is built.
macro_rules! wire_schema {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $build:expr) => {
        $(#[$doc])*
        pub struct $ty;

        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                let build: fn() -> ObjectBuilder = $build;
                build().into()
            }
        }

        impl ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    };
}

wire_schema!(AccountIdText, "AccountId", || text(
    1,
    AccountId::MAX_CHARS,
    Some(AccountId::PATTERN),
    "An account id: 1–128 characters of A-Z a-z 0-9 . _ : -"
));
wire_schema!(JobIdText, "JobId", || text(
    1,
    JobId::MAX_CHARS,
    Some(JobId::PATTERN),
    "A job id as `POST /v1/jobs` returned it"
));
wire_schema!(KeyText, "IdempotencyKey", || text(
    1,
    IdempotencyKey::MAX_CHARS,
    Some(IdempotencyKey::PATTERN),
    "1–255 characters, no control characters; unique per account. The same key again \
     is a replay of the first answer; the same key with a different body is 409 \
     `idempotency_mismatch`, and so is a key one operation used given to another. The \
     key of a money change (top-up, refund, debit, job refund, grant) is kept with its \
     ledger entry, for good; a submit's key record is kept for the rate card's \
     `retention.idempotency_days` (default 30): a submit key replayed after its record \
     was pruned is a new request"
));
wire_schema!(WorkerIdText, "WorkerId", || text(
    1,
    WorkerId::MAX_CHARS,
    Some(WorkerId::PATTERN),
    "The worker's name, for the record: 1–255 characters, no control characters"
));
wire_schema!(PositiveAmount, "PositiveAmount", || text(
    1,
    17,
    Some(POSITIVE_AMOUNT_PATTERN),
    "Money: a decimal string greater than 0 and at most 1000000000, with at most 6 \
     decimals and no leading zero, e.g. `\"10.00\"`"
));
wire_schema!(SpendThresholdText, "SpendThreshold", || text(
    1,
    17,
    Some(holdfast::decide::THRESHOLD_PATTERN.as_str()),
    "A threshold of a period's spending: money (`\"40.00\"`, more than 0) or a whole \
     percentage of the limit from 1 to 1000 (`\"80%\"`)"
));
wire_schema!(MoneyAmount, "MoneyAmount", || text(
    1,
    17,
    Some(AMOUNT_PATTERN),
    "Money: a decimal string from 0 to 1000000000 with at most 6 decimals, e.g. `\"0.04\"`"
));
wire_schema!(ReasonText, "Reason", || text(
    1,
    500,
    Some(holdfast::decide::REASON_PATTERN),
    "Why, for the record: 1–500 characters, not only whitespace, no NUL"
));
wire_schema!(LeaseToken, "LeaseToken", || text(
    1,
    255,
    Some(r"^[^\x00]+$"),
    "The token a lease handed out; a token of another lease is 409 `lease_lost`"
));
wire_schema!(JobRefText, "JobRef", || text(
    1,
    MAX_JOB_REF,
    Some(r"^[^\x00]+$"),
    "What the debit is for (1–255 characters), kept as the entry's `ref`; a job id of \
     this engine makes the debit usage of that job (API.md \"Money\")"
));
wire_schema!(Timestamp, "Timestamp", || ObjectBuilder::new()
    .schema_type(Type::String)
    .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
    .description(Some("An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`")));
wire_schema!(KindName, "KindName", || custom_format(
    "holdfast-kind",
    "A kind of the rate card in force (else 422 `unknown_kind`)"
));
wire_schema!(PlanName, "PlanName", || custom_format(
    "holdfast-plan",
    "A plan of the rate card in force (else 422 `unknown_plan`)"
));
wire_schema!(MeterName, "MeterName", || custom_format(
    "holdfast-meter",
    "A meter of the rate card in force (else 422 `unknown_meter`)"
));
wire_schema!(TimeZoneName, "TimeZoneName", || custom_format(
    "holdfast-time-zone",
    "An IANA time zone of the database built into holdfast, e.g. `Europe/Berlin` or `UTC` \
     (else 422 `invalid_request`)"
));
wire_schema!(AllowanceName, "AllowanceName", || custom_format(
    "holdfast-allowance",
    "An allowance pocket of the rate card in force (not `money`; else 422)"
));

/// Longest `job_ref` a debit may carry, in characters.
pub const MAX_JOB_REF: usize = 255;

/// The start of an account id, or all of one: a prefix, and the cursor of the account
/// listing (empty: no filter, the first page).
const ACCOUNT_ID_START: &str = r"^[A-Za-z0-9._:-]{0,128}$";

/// A string that is one of `values`.
fn one_of<'a>(values: impl IntoIterator<Item = &'a str>, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .description(Some(description))
}

/// The schema of a parameter, by its name (the same name means the same thing on every
/// operation; `after` is an account id on the account listing, a row id elsewhere).
fn parameter_schema(path: &str, name: &str, place: &ParameterIn) -> Option<RefOr<Schema>> {
    let reference = |to: &str| Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(to)));
    let schema = match (name, place) {
        ("group_by", ParameterIn::Query) => {
            let names = UsageGrouping::ALL.map(UsageGrouping::name);
            one_of(names, "What the report groups by")
        }
        ("after", ParameterIn::Query) if path == "/v1/accounts" || path == "/v1/usage" => text(
            0,
            AccountId::MAX_CHARS,
            Some(ACCOUNT_ID_START),
            "The `next` of the previous page: the last account id listed",
        ),
        ("type", ParameterIn::Query) => {
            one_of(EVENT_TYPES.iter().copied(), "Only events of this type")
        }
        ("kind", ParameterIn::Query) => one_of(
            ENTRY_KINDS.iter().copied(),
            "Only ledger entries of this kind",
        ),
        ("status", ParameterIn::Query) => one_of(
            AccountStatus::ALL.map(AccountStatus::as_str),
            "Only accounts in this state",
        ),
        ("account_id", _) => return reference("AccountId"),
        ("job_id", _) => return reference("JobId"),
        ("since" | "until" | "from" | "to" | "at", _) => return reference("Timestamp"),
        ("plan", ParameterIn::Query) => return reference("PlanName"),
        ("lane", ParameterIn::Path) => custom_format(
            "holdfast-lane",
            "A lane of the rate card in force: a kind's lane or its `_priority` twin (else \
             404 `unknown_lane`)",
        ),
        ("limit", ParameterIn::Query) => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(MAX_PAGE))
            .description(Some("Page size, 1–1000 (default 100)")),
        ("after", ParameterIn::Query) => text(
            0,
            18,
            Some(r"^(|0|[1-9][0-9]{0,17})$"),
            "The `next` of the previous page (empty: the first page)",
        ),
        ("prefix", ParameterIn::Query) => text(
            0,
            AccountId::MAX_CHARS,
            Some(ACCOUNT_ID_START),
            "Only account ids that start with this",
        ),
        _ => free_text_parameter(name, place)?,
    };
    Some(schema.into())
}

/// The schema of a text parameter that is not an id, a name or a cursor.
fn free_text_parameter(name: &str, place: &ParameterIn) -> Option<ObjectBuilder> {
    Some(match (name, place) {
        ("endpoint", ParameterIn::Query) => text(
            0,
            2048,
            Some(r"^[^\x00]{0,2048}$"),
            "Only this webhook endpoint's (its URL)",
        ),
        ("customer_id", ParameterIn::Path) => text(
            1,
            255,
            Some(r"^[A-Za-z0-9_]{1,255}$"),
            "A Stripe customer id, e.g. `cus_NffrFeUfNV2Hib`",
        ),
        ("Stripe-Signature", ParameterIn::Header) => text(
            1,
            8192,
            Some(r"^[a-z0-9]+=[^,]*(,[a-z0-9]+=[^,]*)*$"),
            "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">`, as Stripe signs \
             (several `v1` during a secret roll)",
        ),
        ("actor", ParameterIn::Query) => text(
            1,
            300,
            Some(r"^[^\x00]{1,300}$"),
            "Only events this actor caused: `key:<key id>`, `cli:<user>`, `system:<pass>`, \
             `integration:stripe`, `serve:first-admin-key`, `library`",
        ),
        _ => return None,
    })
}

fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// The document as served: every parameter with the schema its name stands for, the
/// schemas they refer to, the debit bodies' "exactly one of", and the links. (Links and
/// the union are added to the JSON: utoipa 5.5 writes a link's `operationId` as
/// `operation_id`.)
pub fn finish(mut doc: OpenApi) -> Value {
    for (path, item) in doc.paths.paths.iter_mut() {
        for op in operations(item) {
            for p in op.parameters.iter_mut().flatten() {
                if let Some(schema) = parameter_schema(path, &p.name, &p.parameter_in) {
                    p.schema = Some(schema);
                }
            }
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    for (name, schema) in [
        (AccountIdText::name(), AccountIdText::schema()),
        (JobIdText::name(), JobIdText::schema()),
        (Timestamp::name(), Timestamp::schema()),
        (PlanName::name(), PlanName::schema()),
        (MoneyAmount::name(), MoneyAmount::schema()),
        (AllowanceName::name(), AllowanceName::schema()),
    ] {
        components
            .schemas
            .entry(name.into_owned())
            .or_insert(schema);
    }
    let mut doc = serde_json::to_value(&doc).expect("the document serializes");
    let schemas = &mut doc["components"]["schemas"];
    schemas["SpendRequest"] = limit_or_amounts(&schemas["SpendRequest"]);
    for name in ["DebitRequest", "DebitItem"] {
        schemas[name] = exactly_one_of(&schemas[name], "amount", "usage");
    }
    schemas["CaptureLine"] = capture_line();
    let statuses: Vec<&str> = JobStatus::ALL.iter().map(|s| s.as_str()).collect();
    schemas["JobBody"]["properties"]["status"]["enum"] = json!(statuses);
    schemas["EventBody"]["properties"]["type"]["enum"] = json!(EVENT_TYPES);
    schemas["EventBody"]["properties"]["data"]["additionalProperties"] = json!(true);
    schemas["LedgerEntryBody"]["properties"]["kind"]["enum"] = json!(ENTRY_KINDS);
    times_are_date_times(schemas);
    // What any whole number in a request is held to; the served document has the card's
    // stale_after_seconds here (`with_card`, API.md "Workers").
    schemas["LeaseRequest"]["properties"]["lease_seconds"]["maximum"] = json!(MAX_WHOLE);
    schemas["UsageRequest"]["properties"]["seconds"]["maximum"] = json!(MAX_USAGE_SECONDS);
    retry_after_is_at_least_one(&mut doc["paths"]);
    add_links(&mut doc);
    doc
}

/// The document as a server running `card` serves it: the card-free document ([`finish`])
/// with the card's names as the `enum` of every `holdfast-*` format (a format whose card
/// list is empty keeps no enum: JSON Schema wants one value at least) and the card's
/// `stale_after_seconds` as the maximum `lease_seconds`. Nothing else differs
/// (`tests/http_ops.rs` checks it).
pub fn with_card(mut doc: Value, card: &RateCard) -> Value {
    name_enums(&mut doc, card);
    doc["components"]["schemas"]["LeaseRequest"]["properties"]["lease_seconds"]["maximum"] =
        json!(card.timeouts.stale_after_seconds);
    doc
}

/// The card's names a `holdfast-*` format stands for; `None` for any other format.
fn card_names(card: &RateCard, format: &str) -> Option<Vec<String>> {
    Some(match format {
        "holdfast-kind" => card.kinds.keys().cloned().collect(),
        "holdfast-plan" => card.plans.keys().cloned().collect(),
        "holdfast-meter" => card.meters.keys().cloned().collect(),
        "holdfast-allowance" => card.allowances.keys().cloned().collect(),
        "holdfast-lane" => card.lanes(),
        // Not the card's: the time zone database's, as built in.
        "holdfast-time-zone" => holdfast::decide::SpendZone::names(),
        _ => return None,
    })
}

/// Gives every schema with a `holdfast-*` format the card's names as its `enum`.
fn name_enums(value: &mut Value, card: &RateCard) {
    match value {
        Value::Object(schema) => {
            let names = schema
                .get("format")
                .and_then(Value::as_str)
                .and_then(|format| card_names(card, format))
                .filter(|names| !names.is_empty());
            if let Some(names) = names {
                schema.insert("enum".into(), json!(names));
            }
            schema.values_mut().for_each(|v| name_enums(v, card));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| name_enums(v, card)),
        _ => {}
    }
}

/// Every `…_at` / `…_until` string of an answer is an RFC 3339 time: says so with
/// `format: date-time`.
fn times_are_date_times(schemas: &mut Value) {
    let Some(schemas) = schemas.as_object_mut() else {
        return;
    };
    for schema in schemas.values_mut() {
        let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for (name, property) in properties.iter_mut() {
            let is_text = property["type"] == "string"
                || property["type"]
                    .as_array()
                    .is_some_and(|t| t.contains(&json!("string")));
            if is_text && (name.ends_with("_at") || name.ends_with("_until")) {
                property["format"] = json!("date-time");
            }
        }
    }
}

/// `Retry-After` (429, 503) is whole seconds, never 0.
fn retry_after_is_at_least_one(paths: &mut Value) {
    let Some(paths) = paths.as_object_mut() else {
        return;
    };
    let operations = paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut());
    for op in operations {
        let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
            continue;
        };
        for response in responses.values_mut() {
            if let Some(schema) = response.pointer_mut("/headers/Retry-After/schema") {
                schema["minimum"] = json!(1);
            }
        }
    }
}

/// A capture line: money as a money string, an allowance pocket as whole items.
fn capture_line() -> Value {
    let line = |pocket: Value, amount: Value| {
        json!({
            "type": "object",
            "required": ["pocket", "amount"],
            "properties": { "pocket": pocket, "amount": amount },
            "additionalProperties": false,
        })
    };
    json!({
        "description": "What to capture of one pocket's hold (0 allowed): money as a \
            money string, an allowance in whole items.",
        "oneOf": [
            line(json!({ "const": "money" }), json!({ "$ref": "#/components/schemas/MoneyAmount" })),
            line(
                json!({ "$ref": "#/components/schemas/AllowanceName" }),
                json!({ "type": "integer", "minimum": 0, "maximum": MAX_WHOLE }),
            ),
        ],
    })
}

/// An object schema with optional fields `a` and `b`, made to say that exactly one of
/// them is given (not null): one branch where `a` is required and `b` absent or null, one
/// the other way round; a generator sees a union of two shapes.
fn exactly_one_of(object: &Value, a: &str, b: &str) -> Value {
    let branch = |given: &str, other: &str| {
        let mut o = object.clone();
        if let Some(required) = o["required"].as_array_mut() {
            required.push(given.into());
        }
        o["properties"][other] = json!({ "type": "null" });
        // The given one is not null: its `oneOf [null, X]` becomes X.
        let field = &mut o["properties"][given];
        if let Some(x) = field["oneOf"]
            .as_array()
            .and_then(|v| v.iter().find(|s| s["type"] != "null"))
        {
            *field = x.clone();
        }
        o.as_object_mut().map(|m| m.remove("description"));
        o
    };
    json!({
        "oneOf": [branch(a, b), branch(b, a)],
        "description": format!("Exactly one of `{a}` and `{b}`."),
    })
}

/// A rule of spending in two shapes: with a limit, whose thresholds may be percentages of
/// it; or without one (absent or null), whose thresholds are amounts.
fn limit_or_amounts(object: &Value) -> Value {
    let mut limited = object.clone();
    limited["required"] = json!(["limit"]);
    let limit = &mut limited["properties"]["limit"];
    if let Some(x) = limit["oneOf"]
        .as_array()
        .and_then(|v| v.iter().find(|s| s["type"] != "null"))
    {
        *limit = x.clone();
    }
    let mut unlimited = object.clone();
    unlimited["properties"]["limit"] = json!({ "type": "null" });
    unlimited["properties"]["alerts"]["items"] =
        json!({ "$ref": "#/components/schemas/PositiveAmount" });
    for branch in [&mut limited, &mut unlimited] {
        branch.as_object_mut().map(|m| m.remove("description"));
    }
    json!({
        "oneOf": [limited, unlimited],
        "description": object["description"],
    })
}

/// One link: the operation an answer leads to, its parameter and where the value comes
/// from in the answer.
type Target = (&'static str, &'static str, &'static str);

/// The links of one operation's answers: (path, method, statuses, targets, lease token).
type Links = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [Target],
    Option<&'static str>,
);

const ACCOUNT: &str = "$response.body#/account_id";
const JOB: &str = "$response.body#/job_id";

/// Where an answer's ids lead: OpenAPI links, so that a client (and stateful testing) can
/// walk account → money, and submit → lease → heartbeat → complete. Each row: the source
/// operation (path, method), its answers that carry the ids, the targets, and a body the
/// targets get (the lease token a lease hands out).
const LINKS: &[Links] = &[
    (
        "/v1/accounts/{account_id}",
        "put",
        &["200", "201"],
        &[
            ("get_account", "account_id", ACCOUNT),
            ("top_up", "account_id", ACCOUNT),
            ("debit", "account_id", ACCOUNT),
            ("account_ledger", "account_id", ACCOUNT),
            ("balance_at", "account_id", ACCOUNT),
            ("grant", "account_id", ACCOUNT),
            ("block", "account_id", ACCOUNT),
            ("unblock", "account_id", ACCOUNT),
            ("ban", "account_id", ACCOUNT),
            ("unban", "account_id", ACCOUNT),
            ("activity", "account_id", ACCOUNT),
        ],
        None,
    ),
    (
        "/v1/jobs",
        "post",
        &["200", "201"],
        &[
            ("get_job", "job_id", JOB),
            ("cancel", "job_id", JOB),
            ("refund_job", "job_id", JOB),
            ("lease", "lane", "$response.body#/lane"),
        ],
        None,
    ),
    (
        "/v1/lanes/{lane}/lease",
        "post",
        &["200"],
        &[
            ("heartbeat", "job_id", JOB),
            ("complete", "job_id", JOB),
            ("fail", "job_id", JOB),
        ],
        Some("$response.body#/lease_token"),
    ),
];

fn add_links(doc: &mut Value) {
    for (path, method, statuses, targets, token) in LINKS {
        let op = &mut doc["paths"][*path][*method];
        for status in *statuses {
            let Some(response) = op["responses"].get_mut(*status) else {
                continue;
            };
            let links: serde_json::Map<String, Value> = targets
                .iter()
                .map(|(target, parameter, expression)| {
                    let mut link = json!({
                        "operationId": target,
                        "parameters": { *parameter: expression },
                    });
                    if let Some(t) = token {
                        link["requestBody"] = json!({ "lease_token": t });
                    }
                    ((*target).to_owned(), link)
                })
                .collect();
            response["links"] = Value::Object(links);
        }
    }
}
