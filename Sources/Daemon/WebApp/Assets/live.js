// The live stream (/v1/live): a snapshot, then every camera event, job change and frame, merged
// into the store. The page never polls. One place decides when to try again after a loss, with
// one backoff, whichever noticed it (the stream's error, or the watchdog on a silent stream).
import { applyCameraEvent, applyFrame, applyJob, applySnapshot, reconnectDelay } from "./model.js";

const CAMERA_EVENTS = ["connection", "shotCompleted", "settingChanged", "battery", "storage", "cameraPower", "busy",
  "meteredEV", "bulbDeadlineFired", "error", "missedEvents", "fileSaved", "fileNotSaved"];

/** Three heartbeats (15 s apart) missed: the connection is gone even if the phone has not noticed. */
const SILENCE_LIMIT_MS = 47000;

export class LiveStream {
  /**
   * @param store the page's store
   * @param hooks `lost()` asks the daemon who this browser is (a revoked browser goes to pairing)
   *   and answers whether to keep trying; `snapshot(reconnected)` and `refresh(camera)` let the
   *   page read what no event says.
   */
  constructor(store, hooks) {
    this.store = store;
    this.hooks = hooks;
    this.source = null;
    this.watchdog = null;
    this.retry = null;
    /** Failures in a row since the last snapshot; the backoff grows with it, once per loss. */
    this.failures = 0;
    this.lastEventAt = 0;
  }

  open() {
    this.close();
    this.store.update((state) => { if (state.live === "open") state.live = "connecting"; });
    const source = new EventSource("/v1/live");
    this.source = source;
    this.feedWatchdog();
    const on = (name, handler) => source.addEventListener(name, (event) => {
      if (event.data === undefined || this.source !== source) return; // the stream's own error, or an old stream
      this.feedWatchdog();
      let data;
      try { data = JSON.parse(event.data); } catch { return; }
      handler(data, name);
    });
    on("snapshot", (snapshot) => {
      const reconnected = this.failures > 0;
      this.failures = 0;
      this.store.update((state) => applySnapshot(state, snapshot, Date.now()));
      this.hooks.snapshot(reconnected);
    });
    on("job", (job) => this.store.update((state) => applyJob(state, job)));
    on("frame", (frame) => this.store.update((state) => applyFrame(state, frame)));
    on("heartbeat", (data) => this.store.update((state) => { state.clockOffset = data.nowUnixMs - Date.now(); }));
    // Every page that followed starts again at once after a change: spread them out a little.
    on("resync", () => { this.close(); this.retry = setTimeout(() => this.open(), 200 + Math.random() * 800); });
    for (const name of CAMERA_EVENTS) {
      on(name, (data) => {
        if (this.store.update((state) => applyCameraEvent(state, name, data, Date.now())) === "refresh") this.hooks.refresh(data.camera);
      });
    }
    source.onerror = (event) => {
      // A camera event named "error" reaches this handler too; it is not the stream failing.
      if (event instanceof MessageEvent || this.source !== source) return;
      // The browser would retry by itself; the page decides instead, so that a revoked browser
      // is sent to pairing and a lost network is shown.
      this.lost();
    };
  }

  close() {
    clearTimeout(this.watchdog);
    clearTimeout(this.retry);
    if (this.source) { this.source.close(); this.source = null; }
  }

  feedWatchdog() {
    this.lastEventAt = Date.now();
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => this.lost(), SILENCE_LIMIT_MS);
  }

  /** The one reaction to a loss: close, show it, and try again after the backoff's next step. */
  async lost() {
    if (!this.source) return; // already lost: the retry is scheduled
    this.close();
    this.failures += 1;
    this.store.update((state) => { state.live = "lost"; });
    const delay = reconnectDelay(this.failures, Math.random());
    this.store.update((state) => { state.reconnectDelays = [...(state.reconnectDelays || []).slice(-9), delay]; });
    if (!(await this.hooks.lost())) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.open(), delay);
  }

  /** A phone that wakes up or gets its network back reconnects at once, not after the backoff,
   *  and so does one whose stream has been quiet for longer than a heartbeat: it may be dead. */
  reconnectIfStale() {
    if (this.store.state.live !== "open" || Date.now() - this.lastEventAt > 20000) this.open();
  }
}
