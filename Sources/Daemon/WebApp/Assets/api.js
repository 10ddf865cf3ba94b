// Requests to the daemon's control API. Every one carries the page's header, which the daemon
// asks of a browser, and fails after a limit instead of leaving a control waiting.

/** A refusal from the daemon, with its message and, for a camera's, the camera error itself. */
export class APIError extends Error {
  constructor(status, document) {
    const error = (document && document.error) || {};
    super(error.message || `the daemon answered ${status}`);
    this.status = status;
    this.code = error.code;
    this.camera = error.camera || null;
  }
}

/** How long a press waits for an answer before it says the daemon did not answer. A shot or a
 *  setting takes well under that; a bulb passes its own, longer limit. */
export const ANSWER_LIMIT_MS = 10000;

/** Called with no argument when the daemon says this browser is no longer paired. */
let unpaired = () => {};
export function onUnpaired(handler) { unpaired = handler; }

/**
 * One request. A request that gets no answer within `timeoutMs` (a phone whose Wi-Fi went) fails
 * with a message saying so; `signal` lets the caller end it sooner.
 */
export async function api(method, path, body, options = {}) {
  const headers = { "Unleashed-Web": "1", Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, options.timeoutMs || ANSWER_LIMIT_MS);
  if (options.signal) options.signal.addEventListener("abort", () => controller.abort());
  let response;
  let text;
  try {
    response = await fetch(path, {
      method, headers, credentials: "same-origin", signal: controller.signal,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    text = await response.text();
  } catch (error) {
    if (error.name === "AbortError" && !timedOut) throw error;
    throw new APIError(0, { error: { message: timedOut ? "the daemon did not answer in time; check the phone's network" : "the daemon cannot be reached; check the phone's network" } });
  } finally {
    clearTimeout(timer);
  }
  let document = null;
  if (text) { try { document = JSON.parse(text); } catch { document = null; } }
  if (response.status === 401 && !path.startsWith("/web/")) unpaired();
  if (!response.ok) throw new APIError(response.status, document);
  return document;
}

export const camerasPath = (name, rest = "") => `/v1/cameras/${encodeURIComponent(name)}${rest}`;
