//! The page's files, embedded in the binary: nothing to install or build beside `tafl`.

use axum::extract::Path;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

use crate::ApiError;

/// The files under `/assets/`: name, content type, content.
const FILES: [(&str, &str, &str); 4] = [
    ("app.js", "text/javascript; charset=utf-8", include_str!("../assets/app.js")),
    ("style.css", "text/css; charset=utf-8", include_str!("../assets/style.css")),
    // uPlot 1.6.32 (MIT, https://github.com/leeoniya/uPlot), its npm package's dist files.
    ("uPlot.iife.min.js", "text/javascript; charset=utf-8", include_str!("../assets/uPlot.iife.min.js")),
    ("uPlot.min.css", "text/css; charset=utf-8", include_str!("../assets/uPlot.min.css")),
];

/// `GET /`: the page.
pub async fn index() -> Html<&'static str> {
    Html(include_str!("../assets/index.html"))
}

/// `GET /assets/{file}`.
pub async fn file(Path(name): Path<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some((_, kind, body)) => {
            ([(header::CONTENT_TYPE, *kind), (header::CACHE_CONTROL, "no-cache")], *body).into_response()
        }
        None => ApiError::NotFound(format!("no asset `{name}`")).into_response(),
    }
}
