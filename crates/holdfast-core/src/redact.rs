//! URLs as logs and pages may show them: without the secrets they often carry. A
//! database URL keeps its host, database and options but not its password (in the
//! user part or a `password=` option); a webhook URL keeps its scheme, host and path but
//! no query value (a receiver's `?token=…` is as secret as a password).

/// `url` with its password hidden: `postgres://u:***@host/db?sslpassword=***`.
pub fn database_url(url: &str) -> String {
    redact(
        url,
        &Hide {
            whole_user: false,
            every_query_value: false,
        },
    )
}

/// `url` with its user part, every query value and its fragment hidden:
/// `https://hooks.example/in?token=***`. (A token in the path, as some receivers put
/// it, is not recognisable as one and stays.)
pub fn webhook_url(url: &str) -> String {
    redact(
        url,
        &Hide {
            whole_user: true,
            every_query_value: true,
        },
    )
}

/// What of a URL is hidden beside its fragment and any password.
struct Hide {
    /// The whole user part, not only its password (a webhook's user is often its token).
    whole_user: bool,
    /// Every query value (bare ones too), not only `*password*=` options.
    every_query_value: bool,
}

/// `url` with what `hide` says, its password and its fragment hidden.
fn redact(url: &str, hide: &Hide) -> String {
    let (head, fragment) = url
        .split_once('#')
        .map_or((url, None), |(h, f)| (h, Some(f)));
    let (base, query) = head
        .split_once('?')
        .map_or((head, None), |(b, q)| (b, Some(q)));
    let mut out = without_user_secret(base, hide.whole_user);
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _))
                    if hide.every_query_value || name.to_ascii_lowercase().contains("password") =>
                {
                    format!("{name}=***")
                }
                None if hide.every_query_value => "***".to_owned(),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    if fragment.is_some() {
        out.push_str("#***");
    }
    out
}

/// `scheme://user:***@rest` for a URL whose user part has a password, or
/// `scheme://***@rest` for any user part when `whole_user`.
fn without_user_secret(url: &str, whole_user: bool) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].split_once(':') {
        _ if whole_user => format!("{scheme}://***{}", &rest[at..]),
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls_lose_their_password_and_keep_the_rest() {
        let cases = [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://u:secret@h1:5432,h2/db?target_session_attrs=read-write",
                "postgres://u:***@h1:5432,h2/db?target_session_attrs=read-write",
            ),
            (
                "postgres://h/db?user=u&password=secret&sslmode=require",
                "postgres://h/db?user=u&password=***&sslmode=require",
            ),
            (
                "postgres://h/db?sslpassword=s&PASSWORD=p",
                "postgres://h/db?sslpassword=***&PASSWORD=***",
            ),
            ("postgres://u:p@h/db?x=1", "postgres://u:***@h/db?x=1"),
            ("sqlite://a@b.db", "sqlite://a@b.db"),
            ("holdfast.db", "holdfast.db"),
        ];
        for (given, shown) in cases {
            assert_eq!(database_url(given), shown, "{given}");
        }
    }

    #[test]
    fn webhook_urls_lose_their_user_every_query_value_and_fragment() {
        let cases = [
            (
                "https://hooks.example/in?token=abc123&team=7",
                "https://hooks.example/in?token=***&team=***",
            ),
            (
                "https://u:pw@hooks.example/in",
                "https://***@hooks.example/in",
            ),
            (
                "https://abc123@hooks.example/in",
                "https://***@hooks.example/in",
            ),
            (
                "https://hooks.example/in#abc123",
                "https://hooks.example/in#***",
            ),
            ("http://127.0.0.1:9000/hook", "http://127.0.0.1:9000/hook"),
            (
                "https://hooks.example/in?abc123",
                "https://hooks.example/in?***",
            ),
            (
                "https://hooks.example/in?abc123&a=abc123#abc123",
                "https://hooks.example/in?***&a=***#***",
            ),
        ];
        for (given, shown) in cases {
            assert_eq!(webhook_url(given), shown, "{given}");
            assert!(
                !shown.contains("abc123") && !shown.contains("pw"),
                "{shown}"
            );
        }
    }
}
