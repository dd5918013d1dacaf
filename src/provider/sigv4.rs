//! AWS Signature Version 4 for one kind of request: a POST with a body and no query string, the
//! only request chatcli sends to Bedrock.
//!
//! Written out here (SHA-256 from `sha2`, HMAC by its RFC 2104 definition) instead of taking the
//! AWS SDK's signer, whose runtime crates pull a second `http` version and about twenty crates
//! more into the build. The rules followed are AWS's for services other than S3: the path is
//! URI-encoded a second time segment by segment (`%3A` in a model id is signed as `%253A`); the
//! signed headers are `content-type`, `host` (port included when it is not the default: the host
//! actually requested), `x-amz-date` and, with temporary credentials, `x-amz-security-token`;
//! the payload hash is in the canonical request but not sent as a header.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// The credentials a request is signed with.
#[derive(Debug, Clone, Copy)]
pub struct Credentials<'a> {
    pub access_key: &'a str,
    pub secret_key: &'a str,
    /// The session token of temporary credentials.
    pub session_token: Option<&'a str>,
}

/// What is signed: a POST of `body` (sent as `content_type`) to `path` on `host`.
#[derive(Debug, Clone, Copy)]
pub struct Post<'a> {
    /// The request path as sent (already percent-encoded once), without a query string.
    pub path: &'a str,
    /// The `host` header: host, and `:port` when the port is not the scheme's default.
    pub host: &'a str,
    pub content_type: &'a str,
    pub body: &'a [u8],
}

/// The headers to add to the request (`x-amz-date`, the token if any, `authorization`); the
/// `host` and `content-type` headers are the caller's and must be sent as given to `post`.
pub fn sign(
    post: &Post<'_>,
    credentials: &Credentials<'_>,
    region: &str,
    service: &str,
    time: SystemTime,
) -> Vec<(String, String)> {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let stamp = crate::clock::utc_stamp(secs);
    // `YYYYMMDD-HHMMSS`: the date, then the time of day.
    let (date, time_of_day) = stamp.split_once('-').unwrap_or((&stamp, ""));
    let amz_date = format!("{date}T{time_of_day}Z");

    let mut headers = vec![
        ("content-type", post.content_type.trim().to_string()),
        ("host", post.host.trim().to_string()),
        ("x-amz-date", amz_date.clone()),
    ];
    if let Some(token) = credentials.session_token {
        headers.push(("x-amz-security-token", token.trim().to_string()));
    }
    let signed_headers: Vec<&str> = headers.iter().map(|(name, _)| *name).collect();
    let signed_headers = signed_headers.join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}:{value}\n"))
        .collect();
    let canonical_request = format!(
        "POST\n{}\n\n{canonical_headers}\n{signed_headers}\n{}",
        canonical_path(post.path),
        hex(&Sha256::digest(post.body))
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let key = [date, region, service, "aws4_request"].iter().fold(
        format!("AWS4{}", credentials.secret_key).into_bytes(),
        |key, part| hmac_sha256(&key, part.as_bytes()).to_vec(),
    );
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));

    let mut out = vec![("x-amz-date".to_string(), amz_date)];
    if let Some(token) = credentials.session_token {
        out.push(("x-amz-security-token".to_string(), token.to_string()));
    }
    out.push((
        "authorization".to_string(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, \
             Signature={signature}",
            credentials.access_key
        ),
    ));
    out
}

/// The path as AWS signs it for services other than S3: each segment URI-encoded again.
fn canonical_path(path: &str) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    path.split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// RFC 3986 encoding as AWS specifies it: unreserved characters kept, every other byte `%XX`.
fn uri_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// HMAC-SHA256 (RFC 2104, block size 64).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        for (b, k) in block.iter_mut().zip(key) {
            *b = *k;
        }
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231, test cases 2 and 6 (a key longer than the block).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn paths_are_encoded_a_second_time() {
        assert_eq!(
            canonical_path("/model/anthropic.claude-v1%3A0/converse-stream"),
            "/model/anthropic.claude-v1%253A0/converse-stream"
        );
        assert_eq!(canonical_path(""), "/");
    }

    /// Signatures computed by the AWS SDK's own signer (`aws-sigv4` 1.3.8) for the same inputs,
    /// before chatcli stopped depending on it.
    #[test]
    fn signs_as_the_aws_sdk_does() {
        let time = UNIX_EPOCH + std::time::Duration::from_secs(1_796_000_000);
        let body = br#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
        let path = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
        let credentials = |session_token| Credentials {
            access_key: "AKIDEXAMPLE",
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            session_token,
        };
        let post = |host| Post {
            path,
            host,
            content_type: "application/json",
            body,
        };
        let remote = sign(
            &post("bedrock-runtime.eu-west-1.amazonaws.com"),
            &credentials(Some("session-token-xyz")),
            "eu-west-1",
            "bedrock",
            time,
        );
        assert_eq!(
            remote,
            vec![
                ("x-amz-date".to_string(), "20261130T005320Z".to_string()),
                (
                    "x-amz-security-token".to_string(),
                    "session-token-xyz".to_string()
                ),
                (
                    "authorization".to_string(),
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/eu-west-1/bedrock/aws4_request, \
                     SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, \
                     Signature=b88fd5113b67e1987d2aaa4da5e57c1775e0b467f09705c48679c03a3cc2021d"
                        .to_string()
                ),
            ]
        );
        let local = sign(
            &post("127.0.0.1:4567"),
            &credentials(None),
            "eu-west-1",
            "bedrock",
            time,
        );
        assert_eq!(
            local.last().map(|(_, v)| v.as_str()),
            Some(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/eu-west-1/bedrock/aws4_request, \
                 SignedHeaders=content-type;host;x-amz-date, \
                 Signature=d23136fb36efb128484046ce50128bf6cb9459a9499006f168662458dd6e69fe"
            )
        );
    }
}
