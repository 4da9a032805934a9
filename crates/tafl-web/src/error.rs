//! Errors of the API: a status and `{"error": "…"}`, shown by the page as they are.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// What went wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request does not make sense: a bad FEN, record, move, spec or parameter.
    #[error("{0}")]
    BadRequest(String),
    /// No such thing (a run number, an asset).
    #[error("{0}")]
    NotFound(String),
    /// The request body is larger than [`crate::MAX_BODY`].
    #[error("{0}")]
    TooLarge(String),
    /// The engine failed (an external engine died, a search thread panicked).
    #[error("{0}")]
    Engine(String),
    /// The request comes from elsewhere than this server's page or names it by a foreign host.
    #[error("{0}")]
    Forbidden(String),
    /// Every search slot is taken.
    #[error("{0}")]
    Busy(String),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Engine(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        (status, Json(serde_json::json!({ "error": self.to_string() }))).into_response()
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::JsonRejection) -> ApiError {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::TooLarge(format!("the request is larger than {} bytes", crate::MAX_BODY));
        }
        ApiError::BadRequest(rejection.body_text())
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> ApiError {
        ApiError::BadRequest(rejection.body_text())
    }
}

/// Any route that does not exist.
pub async fn not_found() -> ApiError {
    ApiError::NotFound("no such page or API route".into())
}
