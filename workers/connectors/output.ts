/** What a connector tool call gives the model: its content as text, capped, with secrets masked. */

interface ContentItem {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

function describeItem(item: ContentItem): string {
  switch (item.type) {
    case 'text':
      return item.text ?? '';
    case 'image':
    case 'audio':
      return `[${item.type}: ${item.mimeType ?? 'unknown type'}, ${Math.floor(((item.data ?? '').length * 3) / 4)} bytes]`;
    case 'resource':
      return item.resource?.text ?? `[resource: ${item.resource?.uri ?? 'unknown'}]`;
    case 'resource_link':
      return `[resource link: ${item.uri ?? ''}${item.name ? ` (${item.name})` : ''}]`;
    default:
      return `[${item.type} content]`;
  }
}

/**
 * The text of an MCP tool result: its content items in order, or its structured content when it has no content
 * (or, from a server of the 2024-10-07 protocol, its `toolResult`).
 */
export function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  if (result.content === undefined && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  const items = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  if (items.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return items.map(describeItem).join('\n');
}

/** Cuts `text` to at most `maxBytes` of UTF-8 (never inside a character) and says so. */
export function capOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}\n[output cut: ${end} of ${bytes.length} bytes shown]`;
}
