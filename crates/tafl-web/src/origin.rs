//! Who may ask: requests from this server's own page and from programs the user runs, not from
//! other web sites the user's browser happens to visit.
//!
//! Three checks, each against an attack a page elsewhere can mount on a server on localhost:
//! * `Host` must be an IP address, `localhost` (or a name under it) or a name the operator
//!   allowed. A DNS-rebinding page reaches the server under its own domain name, which fails.
//! * `Origin`, when a browser sends one, must be this server (`http://` and the `Host`).
//! * On `/api/`, `Sec-Fetch-Site` (sent by current browsers) must be `same-origin` or `none`
//!   (typed by the user): an `<img>`, a form or a `no-cors` fetch from another site is refused
//!   before it reaches a handler.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, AppState};

/// The middleware: refuses a request that fails [`check`] with `403`.
pub async fn same_origin_only(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    match check(request.headers(), request.uri().path(), &state.config.allowed_hosts) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

/// Checks the headers of a request for `path`.
///
/// # Errors
/// [`ApiError::Forbidden`], saying which header and why.
pub fn check(headers: &HeaderMap, path: &str, allowed_hosts: &[String]) -> Result<(), ApiError> {
    for name in ["host", "origin", "sec-fetch-site"] {
        if headers.get_all(name).iter().count() > 1 {
            return Err(ApiError::Forbidden(format!("the request has more than one `{name}` header")));
        }
    }
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    let host = header("host").ok_or_else(|| ApiError::Forbidden("the request names no Host".into()))?;
    if !host_is_allowed(host, allowed_hosts) {
        return Err(ApiError::Forbidden(format!(
            "Host `{host}` is refused: reach this server by its IP address or localhost (`tafl serve --allow-host NAME` allows a name)"
        )));
    }
    if let Some(origin) = header("origin")
        && !origin.eq_ignore_ascii_case(&format!("http://{host}"))
    {
        return Err(ApiError::Forbidden(format!(
            "requests from `{origin}` are refused: only this server's own page may use it"
        )));
    }
    if path.starts_with("/api/")
        && let Some(site) = header("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Err(ApiError::Forbidden(format!(
            "a {site} request is refused: only this server's own page may use its API"
        )));
    }
    Ok(())
}

/// True when `host` (a `Host` header: a name or address, maybe with a port) names this server
/// in a way no other web site can: an IP address, `localhost` or a name under it (browsers
/// resolve those to this machine themselves), or one of `allowed` (compared without case).
#[must_use]
pub fn host_is_allowed(host: &str, allowed: &[String]) -> bool {
    let name = strip_port(host.trim());
    if name.is_empty() {
        return false;
    }
    let bare = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    if bare.parse::<IpAddr>().is_ok() {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    lower == "localhost" || lower.ends_with(".localhost") || allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// `name` of `name:port`; `[v6]` of `[v6]:port`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).expect("a header value"));
        }
        map
    }

    #[test]
    fn hosts_by_address_or_localhost_only() {
        let none: &[String] = &[];
        for host in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "[::1]:8080",
            "[::1]",
            "192.168.1.20:80",
            "localhost:8080",
            "LOCALHOST",
            "tafl.localhost:1",
        ] {
            assert!(host_is_allowed(host, none), "{host}");
        }
        for host in [
            "evil.example:8080",
            "evil.example",
            "127.0.0.1.evil.example:8080",
            "localhost.evil.example",
            "",
            ":8080",
            "[::1",
        ] {
            assert!(!host_is_allowed(host, none), "{host}");
        }
        let allowed = vec!["tafl.lan".to_string()];
        assert!(host_is_allowed("TAFL.lan:8080", &allowed));
        assert!(!host_is_allowed("other.lan:8080", &allowed));
    }

    #[test]
    fn foreign_origins_and_sites_are_refused() {
        let none: &[String] = &[];
        let ok = |pairs: &[(&'static str, &str)], path: &str| check(&headers(pairs), path, none).is_ok();
        assert!(ok(&[("host", "127.0.0.1:8080")], "/api/info"), "a program (no browser headers)");
        assert!(ok(
            &[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080"), ("sec-fetch-site", "same-origin")],
            "/api/engine"
        ));
        assert!(ok(&[("host", "127.0.0.1:8080"), ("sec-fetch-site", "none")], "/api/info"), "typed by the user");
        assert!(ok(&[("host", "127.0.0.1:8080"), ("sec-fetch-site", "cross-site")], "/"), "a link to the page");
        assert!(!ok(&[], "/api/info"), "no Host");
        assert!(!ok(&[("host", "rebound.example:8080")], "/"), "DNS rebinding");
        assert!(!ok(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example")], "/api/engine"));
        assert!(!ok(&[("host", "127.0.0.1:8080"), ("origin", "null")], "/api/engine"));
        assert!(
            !ok(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:9999")], "/api/engine"),
            "another port is another origin"
        );
        assert!(
            !ok(&[("host", "127.0.0.1:8080"), ("sec-fetch-site", "cross-site")], "/api/analyse"),
            "an <img> or no-cors fetch"
        );
        assert!(
            !ok(&[("host", "127.0.0.1:8080"), ("sec-fetch-site", "same-site")], "/api/analyse"),
            "another port of localhost"
        );
        let mut two = headers(&[("host", "127.0.0.1:8080")]);
        two.append("host", HeaderValue::from_static("rebound.example"));
        assert!(check(&two, "/", none).is_err(), "two Hosts");
    }
}
