//! `read_file` of an image (by its extension): the picture goes to a model that sees images,
//! as an image block after the call's result in the same user turn (each wire puts it where it
//! can: inside Anthropic's `tool_result`, a user message after OpenAI Chat's `tool` message);
//! the result's text says what was read. A model without vision gets a result that says so,
//! naming the model, and nothing else: never a silent drop, never the bytes as text.
//!
//! The tool cannot add a block to the conversation itself: it hands the block to the session's
//! `ToolImages` under the call's id, and the agent attaches the images of the calls it ran.

use std::sync::{Arc, Mutex};

use super::workspace::Rooted;
use super::{ToolContext, ToolError, ToolOutput};
use crate::conversation::ContentBlock;
use crate::provider::images::{self, TokenRule};

/// What the tools know of images in this session, and the images read by running calls.
#[derive(Clone, Default)]
pub struct ToolImages {
    /// Why this session's model gets no image (`None`: it takes them).
    pub refused: Option<String>,
    /// How the provider bills an image, for the result's estimate.
    pub rule: Option<TokenRule>,
    /// Images read by calls not yet attached, with their call ids.
    pending: Arc<Mutex<Vec<(String, ContentBlock)>>>,
    /// Images sent this session and their tokens by the formula (`/cost`), specialists' too.
    sent: Arc<Mutex<(u64, u64)>>,
}

impl ToolImages {
    /// The images of a session whose model is refused images for `refused`, billed by `rule`.
    pub fn new(refused: Option<String>, rule: TokenRule) -> Self {
        ToolImages {
            refused,
            rule: Some(rule),
            pending: Default::default(),
            sent: Default::default(),
        }
    }

    /// Counts one image sent, of `tokens` by the provider's formula.
    pub fn count(&self, tokens: u64) {
        if let Ok(mut sent) = self.sent.lock() {
            sent.0 += 1;
            sent.1 += tokens;
        }
    }

    /// Images sent this session, and their tokens by the formula.
    pub fn tally(&self) -> (u64, u64) {
        self.sent.lock().map(|sent| *sent).unwrap_or_default()
    }

    /// Keeps call `id`'s image until the agent attaches it.
    pub fn hold(&self, id: &str, image: ContentBlock) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push((id.to_string(), image));
        }
    }

    /// The images of the calls `ids`, in that order, taken out (a specialist's calls stay for
    /// the specialist: ids are unique).
    pub fn take(&self, ids: &[&str]) -> Vec<ContentBlock> {
        let Ok(mut pending) = self.pending.lock() else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        for id in ids {
            if let Some(at) = pending.iter().position(|(held, _)| held == id) {
                taken.push(pending.remove(at).1);
            }
        }
        taken
    }
}

/// Reads the image at `target` (the model asked for `shown`) for the model, or says why not.
pub async fn read(ctx: &ToolContext, target: Rooted, shown: &str) -> Result<ToolOutput, ToolError> {
    if let Some(why) = &ctx.images.refused {
        return Err(ToolError::Failed(format!(
            "{shown} is an image, and {why}: it was not read"
        )));
    }
    let read = tokio::task::spawn_blocking(move || {
        crate::files::read_beneath(&target.root, &target.rel, images::MAX_IMAGE_BYTES + 1)
    })
    .await
    .map_err(|e| ToolError::Failed(format!("cannot read {shown}: {e}")))?
    .map_err(|e| ToolError::Failed(format!("cannot read {shown}: {e}")))?;
    let size = images::probe(&read.bytes);
    if let Some(why) = images::refusal(shown, read.total, size) {
        return Err(ToolError::Failed(why));
    }
    let Some((format, width, height)) = size else {
        return Err(ToolError::Failed(format!(
            "{shown} is not an image chatcli can read"
        )));
    };
    let tokens = ctx
        .images
        .rule
        .map(|rule| format!(", ~{} tokens", images::tokens(rule, width, height)))
        .unwrap_or_default();
    Ok(ToolOutput {
        text: format!(
            "{shown}: {} image, {width}×{height} px, {:.1} KB{tokens}; the image itself follows this result",
            format.media_type(),
            read.total as f64 / 1024.0
        ),
        image: Some(images::block(format, &read.bytes)),
        ..ToolOutput::default()
    })
}
