//! Images the user attaches to a prompt (`@shot.png`, or a pasted image path): read through
//! the file door, checked against the limit every wire accepts and turned into a content block.
//! The image facts themselves (formats, sizes, token formulas, which models see images) live in
//! `provider::images`, re-exported here, so the tools can use them too.

pub use crate::provider::images::*;

/// An image read for a prompt: its content block and what the notice says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    /// How the user wrote it (`shot.png`).
    pub name: String,
    pub block: crate::conversation::ContentBlock,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
}

/// Reads image `rel` beneath `cwd` through the file door; `Err` says why it is not attached.
pub fn load(
    cwd: &std::path::Path,
    rel: &std::path::Path,
    name: &str,
) -> Result<Attached, super::attachments::AttachError> {
    use super::attachments::AttachError;
    let read = crate::files::read_beneath(cwd, rel, MAX_IMAGE_BYTES + 1)
        .map_err(|e| AttachError::Image(format!("{name} cannot be read ({e}): not attached")))?;
    attached(name, &read.bytes, read.total)
}

/// The image of `bytes` (the file's first bytes, `total` long), named `name` in notices; `Err`
/// says why it is not attached.
pub fn attached(
    name: &str,
    bytes: &[u8],
    total: u64,
) -> Result<Attached, super::attachments::AttachError> {
    use super::attachments::AttachError;
    let size = probe(bytes);
    if let Some(why) = refusal(name, total, size) {
        return Err(AttachError::Image(why));
    }
    let Some((format, width, height)) = size else {
        return Err(AttachError::Image(format!(
            "{name} is not an image chatcli can read: not attached"
        )));
    };
    Ok(Attached {
        name: name.to_string(),
        block: block(format, bytes),
        width,
        height,
        bytes: total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::images::tests::png_header;

    #[test]
    fn an_image_file_loads_as_a_base64_block_and_a_text_file_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("shot.png"), png_header(2, 3)).expect("write");
        std::fs::write(dir.path().join("fake.png"), "hello").expect("write");
        let shot = load(dir.path(), std::path::Path::new("shot.png"), "shot.png").expect("png");
        assert_eq!((shot.width, shot.height), (2, 3));
        match shot.block {
            crate::conversation::ContentBlock::Image { media_type, data } => {
                assert_eq!(media_type, "image/png");
                assert!(data.starts_with("iVBORw0KGgo"), "{data}");
            }
            other => panic!("{other:?}"),
        }
        let fake = load(dir.path(), std::path::Path::new("fake.png"), "fake.png");
        assert!(fake.is_err_and(|e| e.to_string().contains("not a PNG")));
    }
}
