//! Where a run's objects live: a local directory (a plain path or `file:///path`) or an
//! S3-compatible bucket (`s3://bucket/prefix`, with the `s3` feature).
//!
//! The interface is deliberately narrow (list, get, put-if-absent, delete), the operations every
//! object store offers without rename or append, so that the run's naming rules
//! ([`crate::rundir`]) are what make many writers safe:
//!
//! * an object is written whole, in one request, and only if its name is free
//!   ([`Store::put_if_absent`]); a reader sees all of it or nothing;
//! * names are unique per writer (worker id and sequence), so writers never race for a name,
//!   except where the race is the point (the trainer's fence, the first model);
//! * an upload retried after a lost reply finds its own object: same bytes count as done.
//!
//! Keys are relative to the run's root and use `/` between parts; names starting with `.` are
//! temporary files of a local store and never listed.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What [`Store::put_if_absent`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// The object was written.
    Created,
    /// An object of that name was there already; nothing was written.
    Exists,
}

/// How a storage operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The store could not be reached (connection refused, timeout): worth trying again later.
    Unreachable,
    /// The store refused: bad credentials, no permission, no such bucket. Trying again does not
    /// help.
    Denied,
    /// Anything else (a local I/O error, a bad reply).
    Other,
}

/// A storage operation that failed, naming the object.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {message}")]
pub struct StoreError {
    /// The object or prefix, as a URL or path.
    pub location: String,
    /// What kind of failure.
    pub kind: StoreErrorKind,
    /// Why.
    pub message: String,
}

impl StoreError {
    fn io(path: &Path, e: &std::io::Error) -> StoreError {
        StoreError { location: path.display().to_string(), kind: StoreErrorKind::Other, message: e.to_string() }
    }

    /// True when trying again later may succeed.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        self.kind == StoreErrorKind::Unreachable
    }
}

/// The storage of one run.
pub trait Store: Send + Sync + fmt::Debug {
    /// The run's location: a path or a URL.
    fn describe(&self) -> String;

    /// Every key under `prefix` (a folder such as `selfplay/`, or `""` for all), in any order.
    /// A missing prefix is an empty list.
    ///
    /// # Errors
    /// The store cannot be read.
    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError>;

    /// The object `key`, or `None` when there is none.
    ///
    /// # Errors
    /// The store cannot be read.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Writes `bytes` as `key` in one piece, unless `key` exists.
    ///
    /// # Errors
    /// The store cannot be written.
    fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<Put, StoreError>;

    /// Removes `key`; a missing key is not an error.
    ///
    /// # Errors
    /// The store cannot be written.
    fn delete(&self, key: &str) -> Result<(), StoreError>;

    /// The directory of a local store (its keys are files under it); `None` for a remote one.
    fn local_root(&self) -> Option<&Path> {
        None
    }
}

/// What `--run` names: a local directory or a remote prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A directory (a plain path, or a `file://` URL).
    Local(PathBuf),
    /// `s3://bucket/prefix`.
    S3 {
        /// The bucket.
        bucket: String,
        /// The prefix inside it, without a trailing `/` (may be empty).
        prefix: String,
    },
}

impl Location {
    /// Reads a `--run` argument: `s3://bucket/prefix`, `file:///path`, or a plain path.
    ///
    /// # Errors
    /// A URL of another scheme, or one without a bucket or path.
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        let bad = |message: &str| StoreError {
            location: text.to_string(),
            kind: StoreErrorKind::Other,
            message: message.to_string(),
        };
        if let Some(rest) = text.strip_prefix("file://") {
            // file:///abs/path or file://localhost/abs/path.
            let path = rest.strip_prefix("localhost").unwrap_or(rest);
            if !path.starts_with('/') {
                return Err(bad("a file:// URL needs an absolute path: file:///path/to/run"));
            }
            return Ok(Location::Local(PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("an s3:// URL needs a bucket: s3://bucket/prefix"));
            }
            let prefix = prefix.trim_matches('/');
            if prefix.split('/').any(|p| p == "." || p == "..") {
                return Err(bad("an s3:// prefix may not contain `.` or `..` parts"));
            }
            return Ok(Location::S3 { bucket: bucket.to_string(), prefix: prefix.to_string() });
        }
        if let Some((scheme, _)) = text.split_once("://")
            && !scheme.is_empty()
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+')
        {
            return Err(bad(&format!(
                "unknown storage scheme `{scheme}://` (plain paths, file:// and s3:// are supported)"
            )));
        }
        Ok(Location::Local(PathBuf::from(text)))
    }

    /// The run's name, without where it lies: the directory's last component (of its absolute
    /// path for `.` and the like), or the prefix's last part (the bucket for a bucket's root).
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Location::Local(path) => {
                let named = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
                named(path)
                    .or_else(|| fs::canonicalize(path).ok().as_deref().and_then(named))
                    .unwrap_or_else(|| path.display().to_string())
            }
            Location::S3 { bucket, prefix } => {
                prefix.rsplit('/').next().filter(|p| !p.is_empty()).unwrap_or(bucket).to_string()
            }
        }
    }

    /// Opens the store.
    ///
    /// # Errors
    /// An `s3://` location in a build without the `s3` feature, or a store that cannot be set up.
    pub fn open(&self) -> Result<Box<dyn Store>, StoreError> {
        match self {
            Location::Local(path) => Ok(Box::new(LocalStore::new(path))),
            #[cfg(feature = "s3")]
            Location::S3 { bucket, prefix } => Ok(Box::new(s3::S3Store::new(bucket, prefix)?)),
            #[cfg(not(feature = "s3"))]
            Location::S3 { bucket, prefix } => Err(StoreError {
                location: format!("s3://{bucket}/{prefix}"),
                kind: StoreErrorKind::Denied,
                message: "this tafl was built without S3 support: cargo build --release -p tafl-cli --features s3"
                    .into(),
            }),
        }
    }
}

/// A run in a local directory; a key is a file under it. Writes go to a hidden temporary file
/// that is hard-linked to its name (which fails if the name is taken), so a reader sees a whole
/// file or none and only one writer gets a name.
#[derive(Clone, Debug)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// The store of the directory `root` (made when first written).
    #[must_use]
    pub fn new(root: &Path) -> LocalStore {
        LocalStore { root: root.to_path_buf() }
    }

    fn path(&self, key: &str) -> PathBuf {
        key.split('/').filter(|p| !p.is_empty()).fold(self.root.clone(), |p, part| p.join(part))
    }

    fn walk(&self, dir: &Path, key: &str, out: &mut Vec<String>) -> Result<(), StoreError> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StoreError::io(dir, &e)),
        };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            if name.starts_with('.') {
                continue;
            }
            let child = if key.is_empty() { name } else { format!("{key}/{name}") };
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                self.walk(&entry.path(), &child, out)?;
            } else {
                out.push(child);
            }
        }
        Ok(())
    }
}

impl Store for LocalStore {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let folder = prefix.trim_end_matches('/');
        let mut out = Vec::new();
        self.walk(&self.path(folder), folder, &mut out)?;
        Ok(out)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key);
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, &e)),
        }
    }

    fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<Put, StoreError> {
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.root).to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, &e))?;
        if path.exists() {
            return Ok(Put::Exists);
        }
        let temp = tafl_files::temp_sibling(&path, "object");
        let written = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(bytes)?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(StoreError::io(&path, &e));
        }
        // A hard link fails when the name is taken: create-only, whole or nothing.
        let linked = fs::hard_link(&temp, &path);
        let _ = fs::remove_file(&temp);
        match linked {
            Ok(()) => {
                if let Ok(d) = fs::File::open(&dir) {
                    let _ = d.sync_all();
                }
                Ok(Put::Created)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(Put::Exists),
            Err(e) => Err(StoreError::io(&path, &e)),
        }
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(&path, &e)),
        }
    }

    fn local_root(&self) -> Option<&Path> {
        Some(&self.root)
    }
}

/// Writes `bytes` as `key` unless it exists; an existing object with the same bytes (an upload
/// retried after its reply was lost) counts as written by us.
///
/// # Errors
/// The store fails, or `key` holds other bytes (two writers chose one name).
pub fn put_once(store: &dyn Store, key: &str, bytes: &[u8]) -> Result<Put, StoreError> {
    match store.put_if_absent(key, bytes)? {
        Put::Created => Ok(Put::Created),
        Put::Exists => match store.get(key)? {
            Some(existing) if existing == bytes => Ok(Put::Created),
            _ => Ok(Put::Exists),
        },
    }
}

#[cfg(feature = "s3")]
pub mod s3 {
    //! S3 and S3-compatible stores (MinIO, Ceph, SeaweedFS, moto) through `object_store`.
    //!
    //! Endpoint and credentials come from the usual environment variables: `AWS_ENDPOINT_URL`,
    //! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, and
    //! `AWS_ALLOW_HTTP=true` for a plain-http endpoint. Requests are retried a few times within
    //! `TAFL_S3_RETRY_SECONDS` (default 15): an unreachable store is then reported, not waited
    //! for forever.

    use std::sync::Arc;
    use std::time::Duration;

    use futures_util::TryStreamExt;
    use object_store::aws::{AmazonS3, AmazonS3Builder};
    use object_store::path::Path as ObjectPath;
    use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig};

    use super::{Put, Store, StoreError, StoreErrorKind};

    /// A run under `s3://bucket/prefix`.
    pub struct S3Store {
        bucket: String,
        prefix: String,
        store: Arc<AmazonS3>,
        runtime: tokio::runtime::Runtime,
    }

    impl std::fmt::Debug for S3Store {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "S3Store(s3://{}/{})", self.bucket, self.prefix)
        }
    }

    fn env_seconds(name: &str, default: f64) -> Duration {
        let s = std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(default);
        Duration::from_secs_f64(s)
    }

    impl S3Store {
        /// The store of `s3://bucket/prefix`, configured from the environment. Nothing is sent
        /// yet.
        ///
        /// # Errors
        /// The configuration is unusable (a bad endpoint URL, say).
        pub fn new(bucket: &str, prefix: &str) -> Result<S3Store, StoreError> {
            let location = format!("s3://{bucket}/{prefix}");
            let fail = |kind, message: String| StoreError { location: location.clone(), kind, message };
            // reqwest's rustls comes without a crypto provider (no aws-lc-rs build): use ring.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let retry_timeout = env_seconds("TAFL_S3_RETRY_SECONDS", 15.0);
            let retry = RetryConfig { max_retries: 3, retry_timeout, ..RetryConfig::default() };
            let options = ClientOptions::new()
                .with_connect_timeout(Duration::from_secs(5))
                .with_timeout(Duration::from_secs(120));
            let mut builder =
                AmazonS3Builder::from_env().with_bucket_name(bucket).with_retry(retry).with_client_options(options);
            // Our client options replaced those from_env set: AWS_ALLOW_HTTP again.
            if std::env::var("AWS_ALLOW_HTTP").is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
                builder = builder.with_allow_http(true);
            }
            if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
                builder = builder.with_region("us-east-1");
            }
            if let Some(region) = std::env::var_os("AWS_DEFAULT_REGION").and_then(|r| r.into_string().ok())
                && std::env::var_os("AWS_REGION").is_none()
            {
                builder = builder.with_region(region);
            }
            let store = builder.build().map_err(|e| fail(StoreErrorKind::Denied, e.to_string()))?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| fail(StoreErrorKind::Other, e.to_string()))?;
            Ok(S3Store { bucket: bucket.to_string(), prefix: prefix.to_string(), store: Arc::new(store), runtime })
        }

        fn path(&self, key: &str) -> ObjectPath {
            let key = key.trim_matches('/');
            if self.prefix.is_empty() {
                ObjectPath::from(key)
            } else {
                ObjectPath::from(format!("{}/{key}", self.prefix))
            }
        }

        fn url(&self, key: &str) -> String {
            if self.prefix.is_empty() {
                format!("s3://{}/{key}", self.bucket)
            } else {
                format!("s3://{}/{}/{key}", self.bucket, self.prefix)
            }
        }

        fn error(&self, key: &str, e: &object_store::Error) -> StoreError {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                let text = s.to_string();
                if !message.contains(&text) {
                    message = format!("{message}: {text}");
                }
                source = s.source();
            }
            let lower = message.to_lowercase();
            let kind = match e {
                object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
                    StoreErrorKind::Denied
                }
                _ if [
                    "invalidaccesskeyid",
                    "signaturedoesnotmatch",
                    "accessdenied",
                    "nosuchbucket",
                    "forbidden",
                    "403",
                ]
                .iter()
                .any(|w| lower.contains(w)) =>
                {
                    StoreErrorKind::Denied
                }
                _ if [
                    "connect",
                    "timed out",
                    "timeout",
                    "sending request",
                    "connection",
                    "dns",
                    "503",
                    "502",
                    "500",
                ]
                .iter()
                .any(|w| lower.contains(w)) =>
                {
                    StoreErrorKind::Unreachable
                }
                _ => StoreErrorKind::Other,
            };
            StoreError { location: self.url(key), kind, message }
        }
    }

    impl Store for S3Store {
        fn describe(&self) -> String {
            self.url("").trim_end_matches('/').to_string()
        }

        fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
            let folder = prefix.trim_matches('/');
            let path = if folder.is_empty() && self.prefix.is_empty() { None } else { Some(self.path(folder)) };
            let found: Vec<object_store::ObjectMeta> = self
                .runtime
                .block_on(self.store.list(path.as_ref()).try_collect())
                .map_err(|e| self.error(prefix, &e))?;
            let strip = if self.prefix.is_empty() { String::new() } else { format!("{}/", self.prefix) };
            Ok(found
                .into_iter()
                .filter_map(|m| m.location.as_ref().strip_prefix(strip.as_str()).map(str::to_string))
                .collect())
        }

        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
            let path = self.path(key);
            let result = self.runtime.block_on(async {
                let got = self.store.get(&path).await?;
                got.bytes().await
            });
            match result {
                Ok(bytes) => Ok(Some(bytes.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.error(key, &e)),
            }
        }

        fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<Put, StoreError> {
            let path = self.path(key);
            let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
            let payload = PutPayload::from(bytes.to_vec());
            match self.runtime.block_on(self.store.put_opts(&path, payload, options)) {
                Ok(_) => Ok(Put::Created),
                Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                    Ok(Put::Exists)
                }
                Err(e) => Err(self.error(key, &e)),
            }
        }

        fn delete(&self, key: &str) -> Result<(), StoreError> {
            match self.runtime.block_on(self.store.delete(&self.path(key))) {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.error(key, &e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse() {
        assert_eq!(Location::parse("runs/a").unwrap(), Location::Local("runs/a".into()));
        assert_eq!(Location::parse("file:///tmp/r").unwrap(), Location::Local("/tmp/r".into()));
        assert_eq!(Location::parse("file://localhost/tmp/r").unwrap(), Location::Local("/tmp/r".into()));
        assert!(Location::parse("file://tmp/r").is_err());
        assert_eq!(Location::parse("s3://b/p/q/").unwrap(), Location::S3 { bucket: "b".into(), prefix: "p/q".into() });
        assert_eq!(Location::parse("s3://b").unwrap(), Location::S3 { bucket: "b".into(), prefix: String::new() });
        assert!(Location::parse("s3:///p").is_err());
        assert!(Location::parse("s3://b/../x").is_err());
        assert!(Location::parse("gs://b/p").unwrap_err().to_string().contains("gs://"));
    }

    #[test]
    fn a_run_is_named_without_where_it_lies() {
        let name = |text: &str| Location::parse(text).unwrap().name();
        assert_eq!(name("data/runs/a5"), "a5");
        assert_eq!(name("/srv/tafl/data/runs/a5/"), "a5");
        assert_eq!(name("file:///srv/runs/f17"), "f17");
        assert_eq!(name("s3://bucket/runs/a5"), "a5");
        assert_eq!(name("s3://bucket/a5/"), "a5");
        assert_eq!(name("s3://bucket"), "bucket");
        let here = std::env::current_dir().unwrap();
        assert_eq!(name("."), here.file_name().unwrap().to_string_lossy());
    }

    #[test]
    fn local_store_is_create_only_and_lists_recursively() {
        let root = std::env::temp_dir().join(format!("tafl-zero-store-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let store = LocalStore::new(&root);
        assert_eq!(store.list("").unwrap(), Vec::<String>::new());
        assert_eq!(store.put_if_absent("a/b/c.bin", b"one").unwrap(), Put::Created);
        assert_eq!(store.put_if_absent("a/b/c.bin", b"two").unwrap(), Put::Exists);
        assert_eq!(store.get("a/b/c.bin").unwrap().as_deref(), Some(&b"one"[..]));
        assert_eq!(
            put_once(&store, "a/b/c.bin", b"one").unwrap(),
            Put::Created,
            "a retried upload of the same bytes is done"
        );
        assert_eq!(put_once(&store, "a/b/c.bin", b"other").unwrap(), Put::Exists);
        store.put_if_absent("a/d.json", b"{}").unwrap();
        fs::write(root.join("a").join(".hidden.tmp-1"), b"x").unwrap();
        let mut keys = store.list("a/").unwrap();
        keys.sort();
        assert_eq!(keys, ["a/b/c.bin", "a/d.json"]);
        assert_eq!(store.list("a/b").unwrap(), ["a/b/c.bin"]);
        assert_eq!(store.get("nothing").unwrap(), None);
        store.delete("a/d.json").unwrap();
        store.delete("a/d.json").unwrap();
        assert_eq!(store.list("").unwrap(), ["a/b/c.bin"]);
        let _ = fs::remove_dir_all(&root);
    }
}
