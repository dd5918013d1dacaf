//! The images part of the agent: images a prompt's `@` mentions attach (`@shot.png`), read off
//! the agent task, said in a notice with their size and the tokens the provider's formula
//! gives, and added to the prompt's user message as image blocks.
//!
//! A provider whose wire carries no image, or a model that does not see images (by its family,
//! or a local server that does not say it is multimodal), gets none: the notice says it was not
//! attached, naming the model, so the model is never asked about a picture it did not receive.
//! The context guard counts an image at the most a provider bills for one, not by its base64
//! bytes. Images `read_file` read are attached after their calls' results.

use std::path::Path;
use std::sync::Arc;

use super::Agent;
use crate::conversation::{ContentBlock, Message};
use crate::prompt::attachments::AttachError;
use crate::prompt::images::{self, Attached};
use crate::prompt::mentions::{Mention, Target};
use crate::protocol::AgentEvent;

/// Tokens one image is counted as by the context guard: Anthropic's largest (1568² px / 750),
/// more than OpenAI's or Gemini's bill for a picture within the size limit.
const GUARD_IMAGE_TOKENS: usize = 3300;

/// Why `provider`'s model gets no image, in one line naming it; `None` when it takes them.
pub(super) fn vision_refusal(
    provider: &dyn crate::provider::Provider,
    local: Option<bool>,
) -> Option<String> {
    images::vision_refusal(
        provider.name(),
        provider.model(),
        provider.accepts_images(),
        local,
    )
}

/// Loads every image among the mentions (call off the agent task: it reads files).
pub(super) fn load_mentioned(
    mentions: &[Mention],
    cwd: &Path,
) -> Vec<Result<Attached, AttachError>> {
    mentions
        .iter()
        .filter_map(|m| match &m.target {
            Target::File(rel) if images::looks_like_image(rel) => {
                Some(images::load(cwd, rel, &m.written))
            }
            _ => None,
        })
        .collect()
}

/// `bytes`, the serialized size of a request holding `messages`, with each image's base64
/// replaced by what the guard counts it as.
pub(super) fn weigh_images(messages: &[Arc<Message>], bytes: usize) -> usize {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            ContentBlock::Image { data, .. } => Some(data.len()),
            _ => None,
        })
        .fold(bytes, |bytes, data| {
            // `tokens::rough` counts 4 bytes a token.
            bytes.saturating_sub(data) + GUARD_IMAGE_TOKENS * 4
        })
}

/// Tokens of the image whose base64 is `data`, by `rule`, from its header (the first 64 KiB
/// decoded); the guard's count when the header cannot be read.
pub(super) fn formula_tokens(data: &str, rule: images::TokenRule) -> u64 {
    use base64::Engine;
    let head: String = data.chars().take(87_384).collect();
    let head = head.get(..head.len() / 4 * 4).unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()
        .and_then(|bytes| images::probe(&bytes))
        .map_or(GUARD_IMAGE_TOKENS as u64, |(_, w, h)| {
            images::tokens(rule, w, h)
        })
}

/// `bytes`, the serialized size of a request holding `messages`, with each image's base64
/// replaced by its tokens by `rule` (4 bytes a token): what an estimate of the request counts
/// (a response that ended without usage), so an image weighs what the provider bills.
pub(super) fn estimate_bytes(
    messages: &[Arc<Message>],
    bytes: usize,
    rule: images::TokenRule,
) -> usize {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            ContentBlock::Image { data, .. } => Some(data),
            _ => None,
        })
        .fold(bytes, |bytes, data| {
            bytes.saturating_sub(data.len()) + formula_tokens(data, rule) as usize * 4
        })
}

impl Agent {
    /// Keeps the loaded images for the prompt's message, or says why one is not attached.
    pub(super) fn take_images(&mut self, loaded: Vec<Result<Attached, AttachError>>) {
        let provider = self.provider.name().to_string();
        let refused = vision_refusal(self.provider.as_ref(), self.options.local_vision);
        for image in loaded {
            let message = match (image, &refused) {
                (Err(why), _) => why.to_string(),
                (Ok(image), Some(why)) => format!("{} not attached: {why}", image.name),
                (Ok(image), None) => {
                    let tokens =
                        images::tokens(images::rule_for(&provider), image.width, image.height);
                    self.stack.images.push(image.block);
                    self.tools.ctx.images.count(tokens);
                    format!(
                        "attached {} as an image ({}×{} px, {:.1} KB, ~{tokens} tokens by {provider}'s formula)",
                        image.name,
                        image.width,
                        image.height,
                        image.bytes as f64 / 1024.0
                    )
                }
            };
            self.emit(AgentEvent::Notice { message });
        }
    }

    /// Adds the images the batch's `read_file` calls read after their results.
    pub(super) fn attach_tool_images(&self, content: &mut Vec<ContentBlock>) {
        let ids: Vec<&str> = content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        let images = self.tools.ctx.images.take(&ids);
        let rule = images::rule_for(self.provider.name());
        for image in &images {
            if let ContentBlock::Image { data, .. } = image {
                self.tools.ctx.images.count(formula_tokens(data, rule));
            }
        }
        content.extend(images);
    }

    /// Adds the pending images to the newest user message (the prompt just admitted).
    pub(super) fn attach_images(&mut self) {
        if self.stack.images.is_empty() {
            return;
        }
        let images = std::mem::take(&mut self.stack.images);
        if let Some(last) = self
            .thread
            .history
            .last_mut()
            .filter(|m| m.role == crate::conversation::Role::User)
        {
            last.content.extend(images);
        }
    }
}
