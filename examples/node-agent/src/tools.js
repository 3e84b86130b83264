// @ts-check
// The agent's one tool: fetch_page reads a web page with fetch, as an
// agent's web tool does, and gives the model its text, truncated.

/** The most of a page's text the model gets. */
export const MAX_PAGE_CHARS = 8000;

/** The most of a response body the tool reads. */
const MAX_BODY_BYTES = 256 * 1024;

/** @type {import('@anthropic-ai/sdk').default.Tool} */
export const fetchPageTool = {
  name: 'fetch_page',
  description: 'Fetch a web page (http or https) and return its text, truncated. Use it to read a page the user links to or asks about.',
  input_schema: {
    type: 'object',
    properties: { url: { type: 'string', description: 'The absolute http(s) URL of the page.' } },
    required: ['url'],
  },
};

/**
 * Fetches url and returns its text for the model: HTML loses its tags,
 * whitespace is collapsed, and the text is cut at MAX_PAGE_CHARS. A page
 * that cannot be read is an error the model sees and can explain.
 * @param {unknown} input the model's arguments
 * @param {{timeoutMs?: number}} [opts]
 * @returns {Promise<{content: string, isError: boolean}>}
 */
export async function fetchPage(input, { timeoutMs = 8000 } = {}) {
  const url = typeof input === 'object' && input !== null && 'url' in input ? String(input.url) : '';
  let u;
  try {
    u = new URL(url);
  } catch {
    return { content: `not an absolute URL: ${JSON.stringify(url)}`, isError: true };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { content: `only http and https pages can be fetched, not ${u.protocol}`, isError: true };
  try {
    const res = await fetch(u, {
      headers: { 'user-agent': 'node-agent/0.1 (fetch_page)', accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
      redirect: 'follow',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await readCapped(res);
    if (!res.ok) return { content: `HTTP ${res.status} from ${u}: ${pageText(body).slice(0, 500)}`, isError: true };
    const type = res.headers.get('content-type') ?? '';
    const text = type.includes('html') ? pageText(body) : body.trim();
    return { content: text.length > MAX_PAGE_CHARS ? text.slice(0, MAX_PAGE_CHARS) + ' […truncated]' : text, isError: false };
  } catch (err) {
    return { content: `could not fetch ${u}: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}

/**
 * Reads at most MAX_BODY_BYTES of a response as UTF-8.
 * @param {Response} res
 */
async function readCapped(res) {
  if (!res.body) return '';
  const decoder = new TextDecoder();
  let out = '';
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.length;
    out += decoder.decode(chunk, { stream: true });
    if (size >= MAX_BODY_BYTES) break; // leaving the loop cancels the rest
  }
  return out + decoder.decode();
}

/**
 * The readable text of an HTML page: no scripts, styles or tags; entities
 * the common few.
 * @param {string} html
 */
export function pageText(html) {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
