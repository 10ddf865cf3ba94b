// unleashed web app: the daemon's control API in a phone's browser.
//
// One live stream (/v1/live) carries a snapshot, then every camera event, job change and frame;
// the page never polls. Every decision about cameras and runs is the daemon's: the page sends
// requests, shows the daemon's answers and refusals word for word, and keeps nothing of its own
// but the choices of this browser (theme, view, target) in localStorage.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const RING = 339.292; // 2πr of the rings (r = 54)

  // ---------------------------------------------------------------- small helpers

  /** An element with attributes and children; text is set as text, never as HTML. */
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  /** Sets a node's text only when it changes, so a screen reader is told of changes only. */
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  // The grammar of durations and times of day is the daemon's (UnleashedKit's readDuration and
  // TimeOfDay): the same text reads the same on the page as in the CLI, and the web tests hold
  // both to the cases of Tests/Fixtures/text-grammar.json.

  const DURATION_UNITS = [["h", 3600000], ["m", 60000], ["s", 1000], ["ms", 1]];

  /** "250ms", "30s", "1m30s", "0.5s", "1,5s", "1h 30m": numbers with units, largest first, each
   *  once, a fraction rounded to the millisecond; a bare 0 is zero. Milliseconds, NaN otherwise,
   *  Infinity for one written well but too long to count. */
  function parseDuration(text) {
    let rest = String(text).toLowerCase().replace(/^ +| +$/g, "");
    if (rest === "0") return 0;
    if (rest === "") return NaN;
    let total = 0;
    let next = 0;
    let overflow = false;
    while (rest.length) {
      const match = /^([0-9]+)(?:[.,]([0-9]*))? *([a-z]*) */.exec(rest);
      if (!match) return NaN;
      const [, whole, fraction, unit] = match;
      if (fraction !== undefined && (fraction.length < 1 || fraction.length > 9)) return NaN;
      const index = DURATION_UNITS.findIndex(([name]) => name === unit);
      if (index < next) return NaN;
      next = index + 1;
      rest = rest.slice(match[0].length);
      const size = DURATION_UNITS[index][1];
      if (whole.length > 12) { overflow = true; continue; }
      // The fraction's part exactly, as the daemon counts it: digits × unit ÷ 10^digits, half up.
      const scale = 10 ** (fraction || "").length;
      total += Number(whole) * size + Math.floor((Number(fraction || "0") * size * 2 + scale) / (2 * scale));
    }
    if (overflow || total > 9223372036854775807) return Infinity;
    return total;
  }

  /** "6:30", "06:30" or "18:30:15" as [hours, minutes, seconds]; null otherwise. */
  function parseTimeOfDay(text) {
    const match = /^([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?$/.exec(String(text));
    if (!match) return null;
    const [hours, minutes, seconds] = [match[1], match[2], match[3] || "0"].map(Number);
    return hours < 24 && minutes < 60 && seconds < 60 ? [hours, minutes, seconds] : null;
  }

  // The grammar, for the tests that hold it to the daemon's.
  window.unleashedGrammar = Object.freeze({ parseDuration, parseTimeOfDay });

  /** Milliseconds as people read them: 250 ms, 2 s, 1 min 30 s, 2 h 5 min. */
  function formatDuration(ms) {
    if (!isFinite(ms)) return "–";
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${+(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
    const minutes = Math.floor(ms / 60000);
    if (minutes < 60) {
      const seconds = Math.round((ms % 60000) / 1000);
      return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
    }
    const hours = Math.floor(minutes / 60);
    return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  }

  /** A clock: 0:07, 12:30, 1:02:03. */
  function formatClock(ms) {
    const total = Math.max(0, Math.floor(ms / 1000));
    const hours = Math.floor(total / 3600);
    const minutes = Math.floor((total % 3600) / 60);
    const seconds = String(total % 60).padStart(2, "0");
    return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
  }

  function formatMicros(us) {
    if (us === undefined || us === null) return "–";
    return us < 1000 ? `${us} µs` : `${(us / 1000).toFixed(us < 10000 ? 2 : 1)} ms`;
  }

  function setMessage(node, text, kind = "error") {
    node.textContent = text || "";
    node.className = `message ${text ? kind : ""}`;
  }

  /** A button that does `action` only when pressed twice within three seconds: for what cannot be undone. */
  function confirmTwice(button, prompt, action) {
    let armed = null;
    const label = button.textContent;
    button.addEventListener("click", () => {
      if (armed) {
        clearTimeout(armed);
        armed = null;
        button.textContent = label;
        action();
        return;
      }
      button.textContent = prompt;
      armed = setTimeout(() => { armed = null; button.textContent = label; }, 3000);
    });
  }

  const stored = {
    get(key, fallback) {
      try { const value = localStorage.getItem(`unleashed.${key}`); return value === null ? fallback : JSON.parse(value); } catch { return fallback; }
    },
    set(key, value) {
      try { localStorage.setItem(`unleashed.${key}`, JSON.stringify(value)); } catch { /* private mode: choices last this visit */ }
    },
    remove(key) { try { localStorage.removeItem(`unleashed.${key}`); } catch { /* nothing kept */ } },
  };

  // ---------------------------------------------------------------- the API

  /** A refusal from the daemon, with its message and, for a camera's, the camera error itself. */
  class APIError extends Error {
    constructor(status, document) {
      const error = (document && document.error) || {};
      super(error.message || `the daemon answered ${status}`);
      this.status = status;
      this.code = error.code;
      this.camera = error.camera || null;
    }
  }

  /**
   * One request; every one carries the page's header, which the daemon asks of a browser. A
   * request that gets no answer within `timeoutMs` (a phone whose Wi-Fi went) fails instead of
   * leaving a control waiting; `signal` lets the caller end it sooner.
   */
  async function api(method, path, body, options = {}) {
    const headers = { "Unleashed-Web": "1", Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; controller.abort(); }, options.timeoutMs || 30000);
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
    if (response.status === 401 && path !== "/web/pair" && path !== "/web/session") showPairing("This browser is no longer paired: enter a new code.");
    if (!response.ok) throw new APIError(response.status, document);
    return document;
  }

  const camerasPath = (name, rest = "") => `/v1/cameras/${encodeURIComponent(name)}${rest}`;

  // ---------------------------------------------------------------- state

  const state = {
    session: null,
    /** name → { name, source, identity, status, error } */
    cameras: new Map(),
    groups: [],
    /** id → job document */
    jobs: new Map(),
    /** id → { frames: [newest last], keys: Set } */
    frames: new Map(),
    /** camera → setting descriptors, read once a visit and kept current by events */
    settings: new Map(),
    /** The daemon's wall clock less this phone's. */
    clockOffset: 0,
    live: "connecting", // connecting | open | lost
    lastEventAt: 0,
    view: stored.get("view", "photo"),
    target: stored.get("target", null),
    lastShot: null,
    photoBulb: false,
    focusHeld: false,
    busyShooting: false,
    /** A bulb opened without a job (a locked daemon lets operators shoot, not run jobs). */
    directBulb: null,
    /** When the trigger last changed what it does, so a double tap does not close a bulb it opened. */
    triggerChangedAt: 0,
    /** The time-lapse that ended while shown, kept on screen with its outcome. */
    endedRun: undefined,
    /** The camera whose saved pictures the Jobs view shows. */
    picturesShown: null,
  };
  const daemonNow = () => Date.now() + state.clockOffset;

  /** The cameras the page acts on: one camera or a group's. */
  function targetCameras() {
    if (!state.target) return [];
    if (state.target.startsWith("group:")) {
      const group = state.groups.find((g) => g.name === state.target.slice(6));
      return group ? group.cameras.filter((name) => state.cameras.has(name)) : [];
    }
    const name = state.target.slice(7);
    return state.cameras.has(name) ? [name] : [];
  }
  /** The camera whose status, meter and settings the page shows: the target's first. */
  const shownCamera = () => targetCameras()[0] || null;

  const can = (permission) => !!state.session && state.session.permissions.includes(permission);

  /** Whether a job runs on exactly the target's cameras (or, for one camera, includes it). */
  function jobOnTarget(job) {
    const names = job.cameras;
    const wanted = targetCameras();
    if (!wanted.length) return false;
    return wanted.length === 1 ? names.includes(wanted[0]) : wanted.every((name) => names.includes(name));
  }
  // Whether a job is live (waiting, running or paused) is the daemon's to say.
  const isLive = (job) => !!job && job.live === true;
  const runningJobs = () => [...state.jobs.values()].filter(isLive).sort((a, b) => b.id - a.id);
  const runOnTarget = (kind) => runningJobs().find((job) => jobOnTarget(job) && (!kind || kindOf(job) === kind));

  /** photo-bulb (a one-frame bulb job from Photo mode), video, or timelapse. */
  function kindOf(job) {
    const plan = job.plan;
    if (plan.exposure && plan.exposure.kind === "video") return "video";
    if (plan.frames === 1 && plan.exposure && plan.exposure.kind === "bulb") return "photo-bulb";
    return "timelapse";
  }

  /** When the next slot of a running job is due on the daemon's clock, as its schedule says
   *  (the daemon follows pauses, re-anchoring and a ramp's interval); NaN when none is to come. */
  const nextSlot = (job) => (job.nextSlot ? Date.parse(job.nextSlot.at) : NaN);

  // ---------------------------------------------------------------- the live stream

  let source = null;
  let watchdog = null;
  let retryTimer = null;
  let retryDelay = 1000;

  function connectLive() {
    clearTimeout(retryTimer);
    if (source) source.close();
    if (state.live === "open") state.live = "connecting";
    renderConnection();
    source = new EventSource("/v1/live");
    feedWatchdog();
    const on = (name, handler) => source.addEventListener(name, (event) => {
      if (event.data === undefined) return; // the stream's own error, not a camera's event
      feedWatchdog();
      let data;
      try { data = JSON.parse(event.data); } catch { return; }
      handler(data, name);
    });
    on("snapshot", applySnapshot);
    on("job", (job) => applyJob(job));
    on("frame", applyFrame);
    on("heartbeat", (data) => { state.clockOffset = data.nowUnixMs - Date.now(); });
    // Every page that followed starts again at once after a change: spread them out a little.
    on("resync", () => { if (source) source.close(); source = null; retryTimer = setTimeout(connectLive, 200 + Math.random() * 800); });
    for (const name of ["connection", "shotCompleted", "settingChanged", "battery", "storage", "cameraPower", "busy",
      "meteredEV", "bulbDeadlineFired", "error", "missedEvents", "fileSaved", "fileNotSaved"]) {
      on(name, applyCameraEvent);
    }
    source.onerror = (event) => {
      // A camera event named "error" reaches this handler too; it is not the stream failing.
      if (event instanceof MessageEvent) return;
      // The browser would retry by itself; the page decides instead, so that a revoked browser
      // is sent to pairing and a lost network is shown.
      if (source) source.close();
      source = null;
      lost();
    };
  }

  function feedWatchdog() {
    state.lastEventAt = Date.now();
    clearTimeout(watchdog);
    // Three heartbeats missed: the connection is gone even if the phone has not noticed.
    watchdog = setTimeout(() => { if (source) { source.close(); source = null; } lost(); }, 47000);
  }

  async function lost() {
    clearTimeout(watchdog);
    state.live = "lost";
    renderConnection();
    try {
      await refreshSession();
    } catch (error) {
      if (error.status === 401) { showPairing("This browser is no longer paired: enter a new code."); return; }
    }
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connectLive, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10000);
  }

  // A phone that wakes up or gets its network back reconnects at once, not after the backoff,
  // and so does one whose stream has been quiet for longer than a heartbeat: it may be dead.
  function reconnectIfStale() {
    if (!state.session) return;
    if (state.live !== "open" || Date.now() - state.lastEventAt > 20000) connectLive();
  }
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") reconnectIfStale(); });
  window.addEventListener("online", reconnectIfStale);

  function applySnapshot(snapshot) {
    const reconnected = state.live === "lost";
    retryDelay = 1000;
    state.live = "open";
    state.busyShooting = false;
    state.clockOffset = snapshot.nowUnixMs - Date.now();
    state.cameras = new Map();
    for (const entry of snapshot.cameras) state.cameras.set(entry.name, { name: entry.name, source: entry.source, identity: entry.identity });
    for (const entry of snapshot.status.cameras) {
      const camera = state.cameras.get(entry.name) || { name: entry.name, source: entry.source };
      camera.status = entry.status;
      camera.error = entry.error;
      state.cameras.set(entry.name, camera);
    }
    state.groups = snapshot.groups;
    state.jobs = new Map(snapshot.jobs.map((job) => [job.id, job]));
    const frames = new Map();
    for (const entry of snapshot.recentFrames) {
      const known = { frames: [], keys: new Set() };
      for (const frame of entry.frames) addFrame(known, frame);
      frames.set(entry.run, known);
    }
    if (state.endedRun !== undefined && state.frames.has(state.endedRun)) frames.set(state.endedRun, state.frames.get(state.endedRun));
    state.frames = frames;
    chooseTarget();
    renderAll();
    // Settings changed while the page was away were not seen: read them again then, only.
    loadSettings(reconnected);
  }

  const frameKey = (frame) => `${frame.frame}/${frame.part}/${frame.camera || ""}`;
  function addFrame(known, frame) {
    const key = frameKey(frame);
    if (known.keys.has(key)) return false;
    known.keys.add(key);
    known.frames.push(frame);
    if (known.frames.length > 200) known.keys.delete(frameKey(known.frames.shift()));
    return true;
  }

  /**
   * A job's document: from the stream (the daemon's word, in order with its frames) or, with
   * `fromAnswer`, from a request's answer, which may arrive after newer news on the stream and
   * so only adds a job the page has not heard of yet.
   */
  function applyJob(job, fromAnswer = false) {
    const previous = state.jobs.get(job.id);
    if (previous) {
      if (fromAnswer) return;
      // An ended job does not come back to life.
      if (!isLive(previous) && isLive(job)) return;
      // A document sent just before this page's snapshot may arrive after it: a running job's
      // counts only grow, so the larger ones are the newer.
      const total = (s) => (s.taken || 0) + (s.failed || 0) + (s.skipped || 0);
      if (isLive(job) && total(previous.summary) > total(job.summary)) {
        job.summary = previous.summary;
        job.lastFrame = previous.lastFrame;
      }
    }
    // A run the page showed stays on screen once it ends, with its outcome, until put away.
    if (previous && isLive(previous) && !isLive(job) && kindOf(job) === "timelapse" && jobOnTarget(job)) {
      state.endedRun = job.id;
    }
    state.jobs.set(job.id, job);
    if (!isLive(job) && job.id !== state.endedRun) state.frames.delete(job.id);
    pruneJobs();
    renderRun();
    renderPhoto();
    renderVideo();
    renderJobs();
    renderRunChip();
  }

  /** Keeps the running jobs and the newest 20 ended ones: a page left open for a night stays small. */
  function pruneJobs() {
    const ended = [...state.jobs.values()].filter((job) => !isLive(job) && job.id !== state.endedRun).sort((a, b) => b.id - a.id);
    for (const job of ended.slice(20)) { state.jobs.delete(job.id); state.frames.delete(job.id); }
  }

  function applyFrame(frame) {
    const job = state.jobs.get(frame.run);
    let known = state.frames.get(frame.run);
    if (!known) { known = { frames: [], keys: new Set() }; state.frames.set(frame.run, known); }
    if (!addFrame(known, frame)) return;
    if (job) {
      // The job's summary counted every frame before its document; each new one adds to it.
      const summary = job.summary;
      summary[frame.outcome] = (summary[frame.outcome] || 0) + 1;
      if (frame.latenessMicros !== undefined) summary.maxLatenessMicros = Math.max(summary.maxLatenessMicros || 0, frame.latenessMicros);
      job.lastFrame = frame;
      if (job.state === "waiting") job.state = "running";
    }
    renderRun();
    renderRunChip();
    if (job && kindOf(job) === "photo-bulb") renderPhoto();
  }

  function applyCameraEvent(data, name) {
    const camera = state.cameras.get(data.camera);
    if (!camera) return;
    const status = camera.status || (camera.status = {});
    switch (name) {
      case "connection": status.connection = data.connection; status.connectionDetail = data.connectionDetail; camera.error = null; break;
      case "shotCompleted":
        status.shotCounter = data.counter;
        if (data.camera === shownCamera()) state.lastShot = { counter: data.counter, cameraTime: data.cameraTime, at: Date.now() };
        break;
      case "settingChanged": updateSetting(data.camera, data); break;
      case "battery": status.moduleBattery = data.moduleBattery; status.cameraBattery = data.cameraBattery; break;
      case "storage": status.storage = data.storage; status.shotsRemaining = data.shotsRemaining; break;
      case "cameraPower": status.cameraPower = data.cameraPower; break;
      case "busy": status.busy = data.busy; break;
      case "meteredEV": status.meteredEV = data.meteredEV; break;
      case "error": if (data.camera === shownCamera()) setMessage($("photo-message"), `${data.camera}: ${data.message || data.status}`); break;
      case "fileSaved": addThumbnail(data); break;
      default: break;
    }
    if (data.camera === shownCamera()) {
      renderConnection();
      renderStatusBars();
      if (name === "shotCompleted") renderLastShot();
    }
    if (name === "connection") renderCameras();
    // A camera that comes back (or wakes), or whose events were lost, may have changed what no
    // event reported: read it once.
    if ((name === "connection" && data.connection === "ready") || (name === "cameraPower" && data.cameraPower === "on") || name === "missedEvents") {
      refreshCamera(data.camera);
    }
  }

  const refreshing = new Set();
  async function refreshCamera(name) {
    if (refreshing.has(name)) return;
    refreshing.add(name);
    try {
      const document = await api("GET", camerasPath(name));
      const camera = state.cameras.get(name);
      if (camera) { camera.status = document.status; camera.identity = document.identity; camera.error = null; }
      if (name === shownCamera()) { renderConnection(); renderStatusBars(); }
      renderCameras();
    } catch { /* the next event or snapshot brings it */ } finally {
      refreshing.delete(name);
    }
  }

  // ---------------------------------------------------------------- session and pairing

  async function refreshSession() {
    const session = await api("GET", "/web/session");
    state.session = session;
    return session;
  }

  function showPairing(message) {
    if (source) { source.close(); source = null; }
    clearTimeout(watchdog);
    clearTimeout(retryTimer);
    state.session = null;
    $("app").hidden = true;
    $("pairing").hidden = false;
    $("startup-message").hidden = true;
    $("pair-form").hidden = false;
    $("pair-error").textContent = message || "";
    fillCodeFromAddress();
    $("pair-code").focus();
  }

  /** The QR code's address carries the code (`#code=123456`): the person only confirms it. */
  function fillCodeFromAddress() {
    const code = /[#&]code=(\d{6})/.exec(location.hash);
    if (code && !$("pairing").hidden) $("pair-code").value = code[1];
  }
  window.addEventListener("hashchange", fillCodeFromAddress);

  function showApp() {
    $("pairing").hidden = true;
    $("app").hidden = false;
    if (/code=/.test(location.hash)) history.replaceState(null, "", location.pathname);
    applyPermissions();
    showView(state.view);
    connectLive();
  }

  $("pair-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const code = $("pair-code").value.replace(/[\s-]/g, "");
    $("pair-error").textContent = "";
    if (!/^\d{6}$/.test(code)) { $("pair-error").textContent = "A pairing code is six digits."; return; }
    $("pair-submit").disabled = true;
    try {
      state.session = await api("POST", "/web/pair", { code });
      showApp();
    } catch (error) {
      $("pair-error").textContent = error.message;
      $("pair-code").select();
    } finally {
      $("pair-submit").disabled = false;
    }
  });

  confirmTwice($("logout"), "Tap again to unpair", async () => {
    try { await api("POST", "/web/logout"); } catch { /* the cookie goes either way */ }
    showPairing("This browser is no longer paired.");
  });

  /** Disables what this browser may not do, and says why once, in a banner and on each control. */
  function applyPermissions() {
    const session = state.session;
    if (!session) return;
    let reason = "";
    if (session.role === "viewer") {
      reason = "This browser has the viewer role: it can watch, not shoot or change anything. Pair it with an operator code to control the rig.";
    } else if (session.locked) {
      reason = "The daemon is locked: you can watch and shoot, not change settings or start and stop runs (daemon.locked in its configuration).";
    }
    const banner = $("access-banner");
    banner.hidden = !reason;
    banner.textContent = reason;
    for (const node of document.querySelectorAll("[data-needs]")) {
      const allowed = can(node.dataset.needs);
      node.disabled = !allowed;
      if (allowed) {
        node.removeAttribute("title");
        if (node.getAttribute("aria-describedby") === "access-banner") node.removeAttribute("aria-describedby");
      } else {
        node.title = reason;
        node.setAttribute("aria-describedby", "access-banner");
      }
    }
    $("demo-banner").hidden = !session.demo;
    $("session-facts").replaceChildren(
      el("dt", { text: "Name" }), el("dd", { text: session.name }),
      el("dt", { text: "Role" }), el("dd", { text: session.role }),
      el("dt", { text: "May" }), el("dd", { text: session.permissions.join(", ") || "nothing" }),
      el("dt", { text: "Daemon" }), el("dd", { text: `unleashed ${session.version}${session.locked ? " (locked)" : ""}` }),
    );
  }

  // ---------------------------------------------------------------- views, menu, theme

  const views = ["photo", "timelapse", "video", "settings", "cameras", "rig", "jobs", "app"];
  function showView(name) {
    if (!views.includes(name)) name = "photo";
    state.view = name;
    stored.set("view", name);
    for (const view of views) $(`view-${view}`).hidden = view !== name;
    for (const button of document.querySelectorAll("[data-view]")) {
      if (button.dataset.view === name) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
    }
    if (name === "settings") loadSettings();
    if (name === "jobs") loadPictures();
    if (name === "rig") loadRig();
    if (name !== "jobs") closeJobDetail();
    closeMenu();
    tick();
  }
  for (const button of document.querySelectorAll("[data-view]")) {
    button.addEventListener("click", () => { showView(button.dataset.view); $("main").focus({ preventScroll: true }); });
  }

  /** While the menu is open, nothing behind it takes focus or clicks. */
  const behindMenu = () => [...$("app").children].filter((node) => node.id !== "menu" && node.id !== "menu-scrim");
  function openMenu() {
    $("menu").hidden = false;
    $("menu-scrim").hidden = false;
    for (const node of behindMenu()) node.inert = true;
    $("menu-button").setAttribute("aria-expanded", "true");
    ($("menu").querySelector("[aria-current]") || $("menu").querySelector("button")).focus();
  }
  function closeMenu() {
    if ($("menu").hidden) return;
    $("menu").hidden = true;
    $("menu-scrim").hidden = true;
    for (const node of behindMenu()) node.inert = false;
    $("menu-button").setAttribute("aria-expanded", "false");
    $("menu-button").focus({ preventScroll: true });
  }
  $("menu-button").addEventListener("click", () => ($("menu").hidden ? openMenu() : closeMenu()));
  $("menu-scrim").addEventListener("click", closeMenu);
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeMenu(); });

  /** A radio group of state buttons: one checked, arrow keys move, `changed` hears the value. */
  function radioGroup(container, changed, initial) {
    const buttons = [...container.querySelectorAll("[data-value]")];
    const select = (value, notify = true) => {
      for (const button of buttons) {
        const on = button.dataset.value === value;
        button.setAttribute("aria-checked", String(on));
        button.tabIndex = on ? 0 : -1;
      }
      container.dataset.value = value;
      if (notify && changed) changed(value);
    };
    for (const button of buttons) {
      button.addEventListener("click", () => select(button.dataset.value));
      button.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
        if (!step) return;
        event.preventDefault();
        const next = buttons[(buttons.indexOf(button) + step + buttons.length) % buttons.length];
        select(next.dataset.value);
        next.focus();
      });
    }
    select(initial || buttons[0].dataset.value, false);
    return { get value() { return container.dataset.value; }, select };
  }

  function applyTheme(theme) {
    document.documentElement.dataset.theme = theme;
    document.querySelector('meta[name="color-scheme"]').content = theme === "light" ? "light" : "dark";
    stored.set("theme", theme);
  }
  const themeGroup = radioGroup($("theme"), applyTheme, stored.get("theme", "dark"));
  applyTheme(themeGroup.value);

  // ---------------------------------------------------------------- target

  function chooseTarget() {
    const valid = (target) => target && (target.startsWith("group:")
      ? state.groups.some((g) => `group:${g.name}` === target)
      : state.cameras.has(target.slice(7)));
    if (!valid(state.target)) {
      const first = state.cameras.keys().next().value;
      state.target = first ? `camera:${first}` : null;
    }
    const select = $("target");
    select.replaceChildren();
    if (!state.cameras.size) select.append(el("option", { value: "", text: "No camera" }));
    for (const name of state.cameras.keys()) select.append(el("option", { value: `camera:${name}`, text: name }));
    for (const group of state.groups) select.append(el("option", { value: `group:${group.name}`, text: `${group.name} (group of ${group.cameras.length})` }));
    select.value = state.target || "";
  }
  $("target").addEventListener("change", () => setTarget($("target").value));
  function setTarget(target) {
    state.target = target || null;
    stored.set("target", state.target);
    $("target").value = state.target || "";
    state.lastShot = null;
    state.picturesShown = null;
    renderAll();
    loadSettings();
    if (state.view === "jobs") loadPictures();
  }

  // ---------------------------------------------------------------- rendering

  function renderAll() {
    renderConnection();
    renderStatusBars();
    renderPhoto();
    renderRun();
    renderVideo();
    renderSettings();
    renderCameras();
    renderJobs();
    renderRunChip();
    applyPermissions();
  }

  function renderConnection() {
    const node = $("connection");
    const text = $("connection-text");
    let phase;
    let words;
    if (state.live !== "open") {
      phase = state.live === "lost" ? "lost" : "busy";
      words = state.live === "lost" ? "Daemon unreachable: reconnecting…" : "Connecting…";
    } else {
      const name = shownCamera();
      const camera = name && state.cameras.get(name);
      const status = (camera && camera.status) || {};
      if (!camera) {
        [phase, words] = ["busy", "No camera"];
      } else if (camera.error) {
        [phase, words] = ["lost", `${name}: ${camera.error}`];
      } else if (status.connection === "ready") {
        [phase, words] = [status.busy ? "busy" : "ready", `${name}: ${status.busy ? "busy" : "ready"}`];
      } else {
        [phase, words] = [status.connection === "failed" ? "lost" : "busy", `${name}: ${status.connectionDetail || status.connection || "unknown"}`];
      }
    }
    node.dataset.state = phase;
    setText(text, words);
    document.body.classList.toggle("stale", state.live !== "open");
  }

  const storageText = { ok: "Card OK", noCard: "No card", full: "Card full", error: "Card error", readOnly: "Card read-only" };
  const powerText = { on: "On", off: "Off", sleeping: "Asleep" };
  function renderStatusBars() {
    const name = shownCamera();
    const status = (name && state.cameras.get(name) && state.cameras.get(name).status) || {};
    const percent = (value) => (value === null || value === undefined ? "–" : `${value} %`);
    const battery = (node, label, value) => {
      const low = typeof value === "number" && value <= 15;
      setText(node, `${label} ${percent(value)}${low ? " LOW" : ""}`);
      node.classList.toggle("low", low);
    };
    battery($("module-battery"), "Battery", status.moduleBattery);
    setText($("module-link"), status.connection ? `Link ${status.connection}` : "Link –");
    setText($("camera-power"), status.cameraPower ? powerText[status.cameraPower] || status.cameraPower : "–");
    $("camera-power").classList.toggle("low", !!status.cameraPower && status.cameraPower !== "on");
    battery($("camera-battery"), "Battery", status.cameraBattery);
    setText($("camera-card"), status.storage ? storageText[status.storage] || `Card ${status.storage}` : "Card –");
    $("camera-card").classList.toggle("low", !!status.storage && status.storage !== "ok");
    setText($("camera-shots-left"), status.shotsRemaining === null || status.shotsRemaining === undefined ? "Shots left –" : `${status.shotsRemaining} shots left`);
    setText($("camera-ev"), `EV ${status.meteredEV || "–"}`);
    renderMeter(status.meteredEV);
  }

  /** "+12", "-1 1/3", "+3 5/12", "+0" as a number of stops. */
  function stopsOf(text) {
    if (!text) return null;
    const match = /^([+-]?)(\d+)?(?:\s*(\d+)\/(\d+))?$/.exec(text.trim());
    if (!match || (!match[2] && !match[3])) return null;
    const whole = match[2] ? parseInt(match[2], 10) : 0;
    const fraction = match[3] ? parseInt(match[3], 10) / parseInt(match[4], 10) : 0;
    return (match[1] === "-" ? -1 : 1) * (whole + fraction);
  }

  // The meter's scale: EV -12 (a moonless landscape) to +20 (sunlit snow).
  const EV_LOW = -12;
  const EV_HIGH = 20;
  function renderMeter(text) {
    const stops = stopsOf(text);
    setText($("ev-reading"), text || "–");
    const position = stops === null ? 50 : Math.min(100, Math.max(0, ((stops - EV_LOW) / (EV_HIGH - EV_LOW)) * 100));
    $("ev-needle").style.left = `${position}%`;
    $("ev-needle").hidden = stops === null;
    const meter = $("evmeter");
    if (stops === null) meter.removeAttribute("aria-valuenow"); else meter.setAttribute("aria-valuenow", String(stops));
    meter.setAttribute("aria-valuetext", text ? `EV ${text}` : "no reading");
  }

  function renderLastShot() {
    const shot = state.lastShot;
    setText($("shot-counter"), shot ? `#${shot.counter}` : "–");
    setText($("shot-detail"), shot && shot.latencyMs !== undefined ? `${shot.latencyMs.toFixed(0)} ms from the press` : "");
  }

  function renderPhoto() {
    const bulbJob = runOnTarget("photo-bulb");
    const run = runOnTarget("timelapse");
    const trigger = $("trigger");
    const label = $("trigger-label");
    $("photo-single").setAttribute("aria-pressed", String(!state.photoBulb));
    $("photo-bulb").setAttribute("aria-pressed", String(state.photoBulb));
    $("bulb-options").hidden = !state.photoBulb;
    let meaning;
    if (bulbJob || state.directBulb) {
      [meaning, label.textContent] = ["close", "Close"];
      trigger.setAttribute("aria-label", "Close the shutter now");
    } else if (run) {
      // During a run the camera is the run's: a press is an extra frame, journalled with it.
      [meaning, label.textContent] = ["extra", "Extra"];
      trigger.setAttribute("aria-label", `Extra frame in job ${run.id}`);
    } else {
      meaning = state.photoBulb ? "bulb" : "shoot";
      label.textContent = state.busyShooting ? "…" : state.photoBulb ? "Bulb" : "Shoot";
      trigger.setAttribute("aria-label", state.photoBulb ? "Open the shutter in bulb" : "Shoot");
    }
    if (trigger.dataset.meaning !== meaning) { trigger.dataset.meaning = meaning; state.triggerChangedAt = Date.now(); }
    const spinning = state.busyShooting && meaning !== "close";
    $("trigger-ring").classList.toggle("spinning", spinning);
    if (spinning) $("trigger-ring").style.strokeDashoffset = "";
    renderLastShot();
    const settings = state.settings.get(shownCamera()) || [];
    const value = (name) => (settings.find((s) => s.setting === name) || {}).value;
    setText($("photo-settings"), ["shutter-speed", "aperture", "iso"].map((n) => value(n) && (n === "iso" ? `ISO ${value(n)}` : value(n))).filter(Boolean).join(" · "));
    $("half-press").textContent = state.focusHeld ? "Let go" : "Focus";
  }

  function renderRunChip() {
    const run = runOnTarget("timelapse") || runOnTarget("video");
    const chip = $("run-chip");
    chip.hidden = !run;
    if (!run) return;
    const known = state.frames.get(run.id);
    const last = (known && known.frames[known.frames.length - 1]) || run.lastFrame;
    const total = run.plan.frames || (run.plan.durationMs ? Math.ceil(run.plan.durationMs / run.plan.intervalMs) : null);
    setText(chip, `${run.state === "paused" ? "Paused" : "Run"} ${last ? last.frame : 0}/${total || "∞"}`);
    chip.setAttribute("aria-label", `Job ${run.id}: frame ${last ? last.frame : 0} of ${total || "no end"}, ${run.state}. Open it.`);
  }
  $("run-chip").addEventListener("click", () => {
    const run = runOnTarget("timelapse");
    showView(run ? "timelapse" : "video");
  });

  function renderRun() {
    const ended = state.endedRun !== undefined ? state.jobs.get(state.endedRun) : null;
    const job = runOnTarget("timelapse") || (ended && jobOnTarget(ended) ? ended : null);
    $("run-panel").hidden = !job;
    $("plan-form").hidden = !!job;
    if (!job) return;
    const live = isLive(job);
    $("run-controls").hidden = !live;
    $("run-ended").hidden = live;
    const plan = job.plan;
    const known = state.frames.get(job.id) || { frames: [] };
    const last = known.frames[known.frames.length - 1] || job.lastFrame;
    const total = plan.frames || (plan.durationMs ? Math.ceil(plan.durationMs / plan.intervalMs) : null);
    setText($("run-frame"), `${last ? last.frame : 0} of ${total || "∞"}`);
    const summary = job.summary || {};
    setText($("run-lateness"), last && last.latenessMicros !== undefined
      ? `${formatMicros(last.latenessMicros)} (max ${formatMicros(summary.maxLatenessMicros)})` : "–");
    setText($("run-state"), live ? job.state : `${job.state}: ${job.reason || ""}`);
    let remaining = "";
    if (live && total && last) remaining = ` · about ${formatDuration((total - last.frame) * plan.intervalMs)} left`;
    setText($("run-summary"), `Job ${job.id} on ${job.camera}: ${summary.taken || 0} taken, ${summary.failed || 0} failed, ${summary.skipped || 0} skipped · every ${formatDuration(plan.intervalMs)}${remaining}`);
    $("run-pause").textContent = job.state === "paused" ? "Continue" : "Pause";
    $("run-frames").replaceChildren(...known.frames.slice(-8).reverse().map(frameItem));
    if (!live) {
      setText($("run-next"), "done");
      setText($("run-clock"), formatClock(summary.lastMs || 0));
      setRing($("run-ring"), 0);
    }
    tick();
  }

  function frameItem(frame) {
    const details = [frame.camera, frame.exposure, frame.meteredEV ? `EV ${frame.meteredEV}` : null,
      frame.latenessMicros !== undefined ? `late ${formatMicros(frame.latenessMicros)}` : null, frame.error];
    return el("li", {},
      el("span", { className: "clock", text: `#${frame.frame}${frame.part > 1 ? `.${frame.part}` : ""}` }),
      el("span", { className: `outcome ${frame.outcome}`, text: frame.outcome }),
      el("span", { text: details.filter(Boolean).join(" · ") }));
  }

  /** Where a manual recording's start is kept: per target, so a group's recording is the group's. */
  const recordingKey = () => `recording.${state.target}`;

  function renderVideo() {
    const recording = state.target ? stored.get(recordingKey(), null) : null;
    $("record-label").textContent = recording ? "Stop" : "Record";
    $("record").setAttribute("aria-label", recording ? "Stop recording" : "Start recording");
    $("record").classList.toggle("recording", !!recording);
    const job = runOnTarget("video");
    $("clips-form").hidden = !!job;
    $("clips-running").hidden = !job;
    if (job) {
      const s = job.summary || {};
      setText($("clips-summary"), `Clips job ${job.id}: ${s.taken || 0} of ${job.plan.frames || "∞"} clips of ${formatDuration(job.plan.exposure.clipMs)}, every ${formatDuration(job.plan.intervalMs)} (${job.state}).`);
    }
    tick();
  }

  // The clocks and rings: redrawn when a clock's second changes (and a ring at most ten times a
  // second, for intervals under ten seconds), while something runs and the page is in sight;
  // nothing animates in between, so a phone (or a rig's twenty) draws a few frames a second at
  // most. Never a request.
  let ticking = null;

  /** Shows `hidden` of a ring's length hidden. */
  function setRing(node, hidden) {
    node.style.strokeDashoffset = String(RING * Math.min(1, Math.max(0, hidden)));
  }

  /** Milliseconds until a clock counting `ms` shows its next second. */
  const untilNextSecond = (ms, counting = "up") => (counting === "up" ? 1000 - (((ms % 1000) + 1000) % 1000) : ((ms % 1000) + 1000) % 1000 || 1000);

  function tick() {
    clearTimeout(ticking);
    let wait = Infinity;
    const now = daemonNow();
    const run = runOnTarget("timelapse");
    if (run && state.view === "timelapse" && run.t0) {
      const t0 = Date.parse(run.t0);
      const elapsed = now - t0;
      setText($("run-clock"), elapsed < 0 ? `−${formatClock(-elapsed)}` : formatClock(elapsed));
      wait = Math.min(wait, untilNextSecond(elapsed));
      if (run.state === "paused") {
        setText($("run-next"), "paused");
        setRing($("run-ring"), 1);
      } else {
        const next = nextSlot(run);
        const interval = run.plan.intervalMs;
        const remaining = isNaN(next) ? 0 : Math.max(0, next - now);
        // No slot to come (the last one under way, a stop asked for): nothing to count down to.
        setText($("run-next"), isNaN(next) ? "—" : formatClock(remaining + 999));
        setRing($("run-ring"), remaining / interval);
        const ringStep = Math.max(100, interval / 10);
        wait = Math.min(wait, untilNextSecond(remaining, "down"), ringStep, remaining || interval);
      }
    }
    const bulb = runOnTarget("photo-bulb");
    const direct = state.directBulb;
    if ((bulb && bulb.t0) || direct) {
      const open = Math.max(0, direct ? Date.now() - direct.opened : now - Date.parse(bulb.t0));
      const length = direct ? direct.ms : bulb.plan.exposure.ms;
      setText($("trigger-state"), `${formatClock(open)} / ${formatClock(length)}`);
      setRing($("trigger-ring"), 1 - Math.min(1, open / length));
      wait = Math.min(wait, untilNextSecond(open));
    } else if (!state.busyShooting) {
      setText($("trigger-state"), "");
      setRing($("trigger-ring"), 1);
    }
    const recording = state.target ? stored.get(recordingKey(), null) : null;
    if (recording) {
      const length = Date.now() - recording;
      setText($("record-clock"), formatClock(length));
      setRing($("record-ring"), 1 - ((length % 60000) / 60000));
      wait = Math.min(wait, untilNextSecond(length));
    } else {
      setRing($("record-ring"), 1);
    }
    if (wait !== Infinity && document.visibilityState === "visible") ticking = setTimeout(tick, Math.max(50, wait + 5));
  }
  document.addEventListener("visibilitychange", tick);

  // ---------------------------------------------------------------- Photo mode

  const forEachTarget = (action) => Promise.all(targetCameras().map((name) => action(name).then(
    (value) => ({ name, value }), (error) => ({ name, error }))));

  function reportFailures(results, node) {
    const failed = results.filter((r) => r.error && r.error.name !== "AbortError");
    if (failed.length) {
      setMessage(node, failed.map((r) => (results.length > 1 ? `${r.name}: ${r.error.message}` : r.error.message)).join("; "));
      const bulbRefusal = failed.find((r) => r.error.camera && r.error.camera.case === "notInBulbMode");
      if (bulbRefusal && can("operate")) {
        node.append(" ", el("button", { type: "button", text: "Set shutter speed to bulb", onclick: () => setValue(bulbRefusal.name, "shutter-speed", { value: "bulb" }, node) }));
      }
    }
    return failed.length === 0;
  }

  // Bulb lengths a night photographer reaches for, one tap each; any other is typed.
  $("bulb-presets").replaceChildren(...[1, 2, 4, 8, 15, 30, 60, 120, 240].map((seconds) => el("button", {
    type: "button", "data-needs": "shoot", text: seconds < 60 ? `${seconds}s` : `${seconds / 60}m`,
    onclick: () => { $("bulb-seconds").value = String(seconds); syncBulbPresets(); },
  })));
  function syncBulbPresets() {
    const seconds = parseFloat($("bulb-seconds").value);
    for (const button of $("bulb-presets").children) button.setAttribute("aria-pressed", String(parseDuration(button.textContent) === seconds * 1000));
  }
  $("bulb-seconds").addEventListener("input", syncBulbPresets);
  syncBulbPresets();

  $("photo-single").addEventListener("click", () => { state.photoBulb = false; renderPhoto(); });
  $("photo-bulb").addEventListener("click", () => { state.photoBulb = true; renderPhoto(); });

  $("trigger").addEventListener("click", async () => {
    const message = $("photo-message");
    // A second tap of a double tap lands on a trigger that has just changed what it does.
    if (Date.now() - state.triggerChangedAt < 600 && $("trigger").dataset.meaning === "close") return;
    if (!targetCameras().length) { setMessage(message, "No camera to shoot with: pick one in Cameras."); return; }
    const bulbJob = runOnTarget("photo-bulb");
    if (state.directBulb) { state.directBulb.controller.abort(); return; }
    if (bulbJob) {
      try { await api("POST", `/v1/jobs/${bulbJob.id}/stop`, { when: "now" }); } catch (error) { setMessage(message, error.message); }
      return;
    }
    const run = runOnTarget("timelapse");
    if (run) {
      try { await api("POST", `/v1/jobs/${run.id}/extra-frame`); setMessage(message, `Extra frame asked of job ${run.id}.`, "ok"); } catch (error) { setMessage(message, error.message); }
      return;
    }
    if (state.busyShooting) return;
    setMessage(message, "");
    if (state.photoBulb) {
      const ms = Math.round(parseFloat($("bulb-seconds").value) * 1000);
      if (!(ms >= 1)) { setMessage(message, "Bulb seconds: a number like 4 or 0.5."); return; }
      await (can("operate") ? bulbAsJob(ms, message) : bulbWhileHere(ms, message));
      return;
    }
    state.busyShooting = true;
    renderPhoto();
    const results = await forEachTarget((name) => api("POST", camerasPath(name, "/shoot")));
    state.busyShooting = false;
    const shot = results.find((r) => r.value && r.name === shownCamera());
    if (shot) state.lastShot = { counter: shot.value.counter, latencyMs: shot.value.latencyMs, at: Date.now() };
    if (reportFailures(results, message) && results.length > 1) setMessage(message, `${results.length} cameras fired.`, "ok");
    renderPhoto();
    tick();
  });

  /** A bulb exposure as a one-frame job: journalled, timed by the daemon, and not ended by this
   *  page going away (a phone that locks mid-exposure). */
  async function bulbAsJob(ms, message) {
    const names = targetCameras();
    const body = { plan: { intervalMs: ms, frames: 1, exposure: { kind: "bulb", ms } } };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    try {
      applyJob(await api("POST", "/v1/jobs", body), true);
    } catch (error) {
      reportFailures([{ name: names[0], error }], message);
    }
  }

  /** A bulb exposure while this page waits for it: what a locked daemon allows (shooting, not
   *  jobs). Close, or the page going away, ends it early; the camera closes the shutter. */
  async function bulbWhileHere(ms, message) {
    const controller = new AbortController();
    state.directBulb = { ms, opened: Date.now(), controller };
    renderPhoto();
    tick();
    const results = await forEachTarget((name) => api("POST", camerasPath(name, "/bulb"), { ms }, { signal: controller.signal, timeoutMs: ms + 30000 }));
    state.directBulb = null;
    const exposed = results.find((r) => r.value);
    if (exposed) {
      state.lastShot = { counter: exposed.value.shot.counter, latencyMs: exposed.value.shot.latencyMs, at: Date.now() };
      setMessage(message, `Bulb ${exposed.value.ending === "stoppedEarly" ? "closed early" : "done"}${exposed.value.exposedMs ? `: ${formatDuration(exposed.value.exposedMs)}` : ""}.`, "ok");
    }
    if (controller.signal.aborted) setMessage(message, "Bulb closed.", "ok");
    reportFailures(results, message);
    renderPhoto();
    tick();
  }

  $("half-press").addEventListener("click", async () => {
    const message = $("photo-message");
    setMessage(message, "");
    if (state.focusHeld) {
      state.focusHeld = false;
      renderPhoto();
      reportFailures(await forEachTarget((name) => api("POST", camerasPath(name, "/release"))), message);
      return;
    }
    state.focusHeld = true;
    renderPhoto();
    const results = await forEachTarget((name) => api("POST", camerasPath(name, "/focus"), { hold: true }));
    if (reportFailures(results, message)) {
      const outcome = results.map((r) => r.value && r.value.result).filter(Boolean);
      setMessage(message, `Focus: ${outcome.join(", ") || "held"}. Press again to let go.`, "ok");
    } else {
      state.focusHeld = false;
      renderPhoto();
    }
  });

  // ---------------------------------------------------------------- Intervalometer

  const intervals = ["1s", "2s", "3s", "5s", "10s", "15s", "30s", "1m"];
  $("interval-grid").replaceChildren(...intervals.map((text) => el("button", {
    type: "button", role: "radio", "aria-checked": "false", "data-needs": "operate", text,
    onclick: () => { $("plan-interval").value = text; syncIntervalGrid(); planPreview(); },
  })));
  function syncIntervalGrid() {
    const wanted = parseDuration($("plan-interval").value);
    for (const button of $("interval-grid").children) button.setAttribute("aria-checked", String(parseDuration(button.textContent) === wanted));
  }
  const stopKind = radioGroup($("stop-kind"), (value) => {
    for (const node of document.querySelectorAll("[data-stop]")) node.hidden = node.dataset.stop !== value;
    planPreview();
  });
  const exposureKind = radioGroup($("exposure-kind"), (value) => {
    for (const node of document.querySelectorAll("[data-exposure]")) node.hidden = node.dataset.exposure !== value;
    planPreview();
  });
  const overrunKind = radioGroup($("overrun-kind"));
  for (const input of $("plan-form").querySelectorAll("input")) input.addEventListener("input", () => { syncIntervalGrid(); planPreview(); });

  /** The next time this phone's clock shows `hh:mm[:ss]`, as an instant on the daemon's clock:
   *  the photographer means the phone's time of day, whatever zone the daemon keeps. */
  function untilInstant(text) {
    const [hours, minutes, seconds] = parseTimeOfDay(text);
    const end = new Date();
    end.setHours(hours, minutes, seconds || 0, 0);
    if (end.getTime() <= Date.now()) end.setDate(end.getDate() + 1);
    return new Date(end.getTime() + state.clockOffset).toISOString();
  }

  /** The plan as the API takes it, or a message naming the field that is wrong. */
  function readPlan() {
    const intervalMs = parseDuration($("plan-interval").value);
    if (!(isFinite(intervalMs) && intervalMs > 0)) return { problem: "Interval: write it like 2s, 500ms or 1m." };
    const plan = { intervalMs, overrun: overrunKind.value };
    switch (stopKind.value) {
      case "frames": {
        const frames = parseInt($("plan-frames").value, 10);
        if (!(frames >= 1)) return { problem: "Frames: at least 1." };
        plan.frames = frames;
        break;
      }
      case "duration": {
        const durationMs = parseDuration($("plan-duration").value);
        if (!(isFinite(durationMs) && durationMs > 0)) return { problem: "Duration: write it like 90m or 1h30m." };
        plan.durationMs = durationMs;
        break;
      }
      case "until": {
        const until = $("plan-until").value;
        if (!parseTimeOfDay(until)) return { problem: "End time: pick a time of day." };
        plan.until = untilInstant(until);
        break;
      }
      default: plan.forever = true;
    }
    switch (exposureKind.value) {
      case "bulb": {
        const ms = parseDuration($("plan-bulb").value);
        if (!(isFinite(ms) && ms > 0)) return { problem: "Bulb: write it like 1s or 800ms." };
        plan.exposure = { kind: "bulb", ms };
        break;
      }
      case "bracket":
        plan.exposure = { kind: "bracket", count: parseInt($("plan-bracket-count").value, 10), stepThirds: parseInt($("plan-bracket-step").value, 10) };
        break;
      case "ramp": {
        const ramp = { kind: "ramp", minISO: parseInt($("plan-ramp-min-iso").value, 10), maxISO: parseInt($("plan-ramp-max-iso").value, 10) };
        const bulbFrom = $("plan-ramp-bulb-from").value.trim();
        ramp.bulbFromMs = bulbFrom === "" || bulbFrom === "never" ? null : parseDuration(bulbFrom);
        if (ramp.bulbFromMs !== null && !isFinite(ramp.bulbFromMs)) return { problem: "Bulb from: write it like 1s, or leave it empty for never." };
        const gap = parseDuration($("plan-ramp-gap").value);
        if (isFinite(gap)) ramp.gapMs = gap;
        const night = $("plan-ramp-night").value.trim();
        if (night) {
          ramp.nightIntervalMs = parseDuration(night);
          if (!isFinite(ramp.nightIntervalMs)) return { problem: "Night interval: write it like 30s, or leave it empty." };
        }
        plan.exposure = ramp;
        break;
      }
      default: plan.exposure = { kind: "camera" };
    }
    const start = $("plan-delay").value.trim() || "0";
    // A time of day is the phone's; the wait until then is the same on any clock.
    const delay = parseTimeOfDay(start) ? Date.parse(untilInstant(start)) - state.clockOffset - Date.now() : parseDuration(start);
    if (!isFinite(delay) || delay < 0) return { problem: "Delay or time: write a wait like 10s, or a time of day like 21:30." };
    return { plan, delay };
  }

  function planPreview() {
    const { plan, problem } = readPlan();
    if (problem) { setText($("plan-preview"), ""); return; }
    const frames = plan.frames || (plan.durationMs ? Math.ceil(plan.durationMs / plan.intervalMs) : null);
    const pictures = plan.exposure.kind === "bracket" ? ` (${plan.exposure.count} pictures each)` : "";
    setText($("plan-preview"), frames
      ? `${frames} frames${pictures} every ${formatDuration(plan.intervalMs)}: ${formatDuration(frames * plan.intervalMs)}, a ${formatDuration((frames / 25) * 1000)} clip at 25 fps.`
      : `Every ${formatDuration(plan.intervalMs)}${pictures} until ${plan.until ? new Date(Date.parse(plan.until) - state.clockOffset).toLocaleString() : "stopped"}.`);
  }

  $("plan-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const message = $("plan-message");
    const { plan, delay, problem } = readPlan();
    if (problem) { setMessage(message, problem); return; }
    const names = targetCameras();
    if (!names.length) { setMessage(message, "No camera to run on: pick one in Cameras."); return; }
    const body = { plan, startDelayMs: delay };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    setMessage(message, "");
    setMessage($("run-message"), "");
    $("plan-start").disabled = true;
    try {
      applyJob(await api("POST", "/v1/jobs", body), true);
    } catch (error) {
      reportFailures([{ name: names[0], error }], message);
    } finally {
      applyPermissions();
    }
  });

  async function runCommand(path, body) {
    const job = runOnTarget("timelapse");
    if (!job) return;
    setMessage($("run-message"), "");
    try {
      const answer = await api("POST", `/v1/jobs/${job.id}/${path}`, body);
      if (path === "stop" && body && body.when === "afterFrame") setMessage($("run-message"), "The run stops after this frame.", "ok");
      if (path === "extra-frame") setMessage($("run-message"), "Extra frame asked.", "ok");
      // Pause and continue answer with the job; the stream brings the same news in order.
      if (answer && answer.id && (path === "pause" || path === "continue")) {
        const known = state.jobs.get(answer.id);
        if (known && isLive(known) && isLive(answer)) { known.state = answer.state; known.live = answer.live; renderRun(); renderRunChip(); }
      }
    } catch (error) {
      setMessage($("run-message"), error.message);
    }
  }
  $("run-pause").addEventListener("click", () => {
    const job = runOnTarget("timelapse");
    runCommand(job && job.state === "paused" ? "continue" : "pause");
  });
  $("run-extra").addEventListener("click", () => runCommand("extra-frame"));
  $("run-stop-after").addEventListener("click", () => runCommand("stop", { when: "afterFrame" }));
  confirmTwice($("run-stop"), "Tap again to stop", () => runCommand("stop", { when: "now" }));
  $("run-new").addEventListener("click", () => { state.endedRun = undefined; renderRun(); $("plan-interval").focus(); });

  // ---------------------------------------------------------------- Video

  $("record").addEventListener("click", async () => {
    const message = $("video-message");
    if (!targetCameras().length) { setMessage(message, "No camera: pick one in Cameras."); return; }
    const key = recordingKey();
    setMessage(message, "");
    if (stored.get(key, null)) {
      const results = await forEachTarget((camera) => api("POST", camerasPath(camera, "/video/stop")));
      if (reportFailures(results, message)) {
        stored.remove(key);
        const clip = results[0].value;
        setMessage(message, clip && clip.ms !== undefined ? `Recorded ${formatDuration(clip.ms)}.` : "Recording stopped.", "ok");
      }
    } else {
      const results = await forEachTarget((camera) => api("POST", camerasPath(camera, "/video/start")));
      if (reportFailures(results, message)) stored.set(key, Date.now());
    }
    renderVideo();
  });

  $("clips-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const message = $("clips-message");
    const clipMs = parseDuration($("clip-length").value);
    const intervalMs = parseDuration($("clip-interval").value);
    const frames = parseInt($("clip-count").value, 10);
    if (!(isFinite(clipMs) && clipMs > 0)) { setMessage(message, "Clip: write it like 5s."); return; }
    if (!(isFinite(intervalMs) && intervalMs > 0)) { setMessage(message, "Every: write it like 1m."); return; }
    if (!(frames >= 1)) { setMessage(message, "Clips: at least 1."); return; }
    const names = targetCameras();
    if (!names.length) { setMessage(message, "No camera: pick one in Cameras."); return; }
    const body = { plan: { intervalMs, frames, exposure: { kind: "video", clipMs } } };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    try { applyJob(await api("POST", "/v1/jobs", body), true); setMessage(message, ""); } catch (error) { setMessage(message, error.message); }
  });
  confirmTwice($("clips-stop"), "Tap again to stop", async () => {
    const job = runOnTarget("video");
    if (!job) return;
    try { await api("POST", `/v1/jobs/${job.id}/stop`, { when: "now" }); } catch (error) { setMessage($("video-message"), error.message); }
  });

  // ---------------------------------------------------------------- Settings pickers

  const settingsLoading = new Set();
  /** Reads the shown camera's settings over the radio once a visit (or again with `force`);
   *  `settingChanged` events keep them current, so a run's link is not asked twice. */
  async function loadSettings(force = false) {
    const name = shownCamera();
    if (!name || state.live !== "open") return;
    if (state.settings.has(name) && !force) { renderSettings(); return; }
    const camera = state.cameras.get(name);
    if (camera && camera.identity && !camera.identity.capabilities.includes("readSettings")) {
      state.settings.set(name, []);
      renderSettings();
      return;
    }
    if (settingsLoading.has(name)) return;
    settingsLoading.add(name);
    try {
      const answer = await api("GET", camerasPath(name, "/settings"));
      state.settings.set(name, answer.settings);
      setMessage($("settings-message"), "");
    } catch (error) {
      setMessage($("settings-message"), error.message);
    } finally {
      settingsLoading.delete(name);
    }
    if (name === shownCamera()) { renderSettings(); renderPhoto(); }
  }

  function updateSetting(cameraName, change) {
    const settings = state.settings.get(cameraName);
    if (!settings) return;
    const setting = settings.find((s) => s.setting === change.setting);
    if (!setting) return;
    setting.value = change.value;
    if (change.raw !== undefined) setting.raw = change.raw;
    else {
      const choice = setting.choices.find((c) => c.value === change.value);
      if (choice) setting.raw = choice.raw;
    }
    if (cameraName !== shownCamera()) return;
    // In place, so that a field being typed in, the focus and the scroll stay as they are.
    const box = $("settings-list").querySelector(`.setting[data-setting="${CSS.escape(setting.setting)}"]`);
    if (box) {
      setText(box.querySelector(".setting-head strong"), setting.value);
      for (const option of box.querySelectorAll("button[data-raw]")) option.setAttribute("aria-pressed", String(Number(option.dataset.raw) === setting.raw));
    } else {
      renderSettings();
    }
    renderPhoto();
  }

  const settingTitles = {
    iso: "ISO", "shutter-speed": "Shutter speed", aperture: "Aperture", "exposure-compensation": "Exposure compensation",
    "white-balance": "White balance", "drive-mode": "Drive mode", "focus-mode": "Focus mode", "image-format": "Image format",
  };
  const typedSettings = new Set(["iso", "shutter-speed", "aperture", "exposure-compensation"]);

  function renderSettings() {
    const list = $("settings-list");
    const name = shownCamera();
    const settings = name ? state.settings.get(name) : null;
    if (!name) { list.replaceChildren(el("p", { className: "muted", text: "No camera: pick one in Cameras." })); return; }
    if (!settings) { list.replaceChildren(el("p", { className: "muted", text: "Reading the camera's settings…" })); return; }
    if (!settings.length) { list.replaceChildren(el("p", { className: "muted", text: `${name} offers no settings to read or change.` })); return; }
    if (list.dataset.camera === name && list.children.length === settings.length) {
      for (const setting of settings) updateSetting(name, { setting: setting.setting, value: setting.value, raw: setting.raw });
      return;
    }
    list.dataset.camera = name;
    list.replaceChildren(...settings.map((setting) => settingPicker(name, setting)));
    applyPermissions();
  }

  /** One setting: its value, its choices as buttons (a row to swipe, or a column), and for the
   *  exposure settings a field for a value that is not listed. */
  function settingPicker(cameraName, setting) {
    const title = settingTitles[setting.setting] || setting.setting;
    const horizontal = typedSettings.has(setting.setting) || setting.choices.length > 8;
    const message = el("p", { className: "message", role: "alert" });
    const picker = el("div", { className: horizontal ? "hpicker" : "vpicker", role: "group", "aria-label": title });
    for (const choice of setting.choices) {
      picker.append(el("button", {
        type: "button", "aria-pressed": String(choice.raw === setting.raw), "data-raw": String(choice.raw),
        "data-needs": setting.readOnly ? "never" : "operate",
        text: choice.value, onclick: () => setValue(cameraName, setting.setting, { raw: choice.raw }, message),
      }));
    }
    const box = el("div", { className: "setting", "data-setting": setting.setting },
      el("div", { className: "setting-head" }, el("span", { text: title }), el("strong", { text: setting.value })),
      setting.readOnly ? el("p", { className: "muted small", text: "Read-only on this camera." }) : picker);
    if (typedSettings.has(setting.setting) && !setting.readOnly) {
      const input = el("input", { type: "text", "aria-label": `Other ${title.toLowerCase()}`, placeholder: "other value", "data-needs": "operate" });
      const form = el("form", { className: "other-value", novalidate: true }, input, el("button", { type: "submit", text: "Set", "data-needs": "operate" }));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (input.value.trim()) setValue(cameraName, setting.setting, { value: input.value.trim() }, message);
      });
      box.append(form);
    }
    box.append(message);
    if (horizontal) {
      requestAnimationFrame(() => {
        const selected = picker.querySelector('[aria-pressed="true"]');
        if (selected) picker.scrollLeft = selected.offsetLeft - picker.offsetLeft - picker.clientWidth / 2 + selected.clientWidth / 2;
      });
    }
    return box;
  }

  /** Sets a value; a refusal shows the daemon's words and, for a value not offered, the nearest choices. */
  async function setValue(cameraName, settingName, body, message) {
    setMessage(message, "");
    try {
      const answer = await api("PUT", camerasPath(cameraName, `/settings/${encodeURIComponent(settingName)}`), body);
      updateSetting(cameraName, answer);
      if (message.isConnected) setMessage(message, `${settingTitles[answer.setting] || answer.setting} is ${answer.value}.`, "ok");
    } catch (error) {
      const target = message.isConnected ? message : $("settings-message");
      setMessage(target, error.message);
      const refusal = error.camera;
      if (refusal && refusal.case === "valueNotOffered" && refusal.nearest && refusal.nearest.length) {
        target.append(el("br"), "Nearest: ", ...refusal.nearest.map((choice) => el("button", {
          type: "button", className: "nearest", text: choice.value, "data-needs": "operate",
          onclick: () => setValue(cameraName, settingName, { raw: choice.raw }, target),
        })));
      }
    }
  }

  // ---------------------------------------------------------------- Cameras and groups

  function renderCameras() {
    const items = [];
    for (const camera of state.cameras.values()) {
      const status = camera.status || {};
      const identity = camera.identity || {};
      const target = `camera:${camera.name}`;
      items.push(el("li", {},
        el("div", { className: "title" }, el("span", { text: camera.name }), el("span", { className: "muted", text: status.connection || camera.error || "" })),
        el("div", { className: "muted small", text: [identity.cameraModel, identity.name, camera.source, status.cameraBattery !== undefined && status.cameraBattery !== null ? `battery ${status.cameraBattery} %` : null].filter(Boolean).join(" · ") }),
        el("button", { type: "button", text: state.target === target ? "In use" : "Use", "aria-pressed": String(state.target === target), onclick: () => { setTarget(target); showView("photo"); } })));
    }
    for (const group of state.groups) {
      const target = `group:${group.name}`;
      items.push(el("li", {},
        el("div", { className: "title" }, el("span", { text: `${group.name}` }), el("span", { className: "muted", text: "group" })),
        el("div", { className: "muted small", text: group.cameras.join(", ") }),
        el("button", { type: "button", text: state.target === target ? "In use" : "Use", "aria-pressed": String(state.target === target), onclick: () => { setTarget(target); showView("photo"); } })));
    }
    if (!items.length) items.push(el("li", { className: "muted", text: "The daemon holds no camera yet. Connect one with `unleashed connect` or list modules in its configuration." }));
    $("camera-list").replaceChildren(...items);
  }

  // ---------------------------------------------------------------- The rig across hosts (MQTT)

  /** While the rig view is open, the fleet as the daemon hears it on its broker, every second. */
  let rigTimer = null;
  async function loadRig() {
    clearTimeout(rigTimer);
    if (state.view !== "rig") return;
    try {
      renderRig(await api("GET", "/v1/fleet", undefined, { timeoutMs: 5000 }));
    } catch (error) {
      setText($("rig-summary"), error.message);
    }
    if (state.view === "rig") rigTimer = setTimeout(loadRig, 1000);
  }

  /** A slot's mark: taken when every camera of the host took it; its counts in words for screen readers. */
  function slotItem(slot) {
    const outcome = slot.failed ? "failed" : slot.skipped ? "skipped" : "taken";
    const words = [slot.taken && `${slot.taken} taken`, slot.failed && `${slot.failed} failed`, slot.skipped && `${slot.skipped} skipped`].filter(Boolean).join(", ");
    return el("li", { className: outcome, title: `slot ${slot.slot}: ${words}`, "aria-label": `slot ${slot.slot}: ${words}`, "data-slot": String(slot.slot) },
      outcome === "taken" ? String(slot.slot) : `${slot.slot}${outcome === "failed" ? "✗" : "–"}`);
  }

  function renderRig(fleet) {
    if (!fleet.enabled) {
      setText($("rig-summary"), "This daemon has no MQTT broker: set [mqtt] broker in its configuration to see every host of a rig here (docs/mqtt.md).");
      $("rig-hosts").replaceChildren();
      return;
    }
    const online = fleet.hosts.filter((host) => host.online).length;
    const rig = !fleet.rig ? "no time-lapse running"
      : fleet.rig.lowestSlot === fleet.rig.highestSlot ? `every running host at slot ${fleet.rig.lowestSlot}`
      : `hosts at slots ${fleet.rig.lowestSlot} to ${fleet.rig.highestSlot}`;
    setText($("rig-summary"), `${fleet.connected ? "" : "Not connected to the broker; as last heard. "}${fleet.hosts.length} host${fleet.hosts.length === 1 ? "" : "s"}, ${online} online · ${rig}`);
    $("rig-hosts").replaceChildren(...fleet.hosts.map((host) => {
      const clock = !host.clock ? "clock unknown"
        : host.clock.synchronised ? `clock ±${host.clock.estimatedErrorMs.toFixed(1)} ms` : `clock NOT synchronised (estimate ${Math.round(host.clock.estimatedErrorMs)} ms)`;
      const cameras = host.cameras.map((camera) => `${camera.name} ${camera.connection || "?"}${camera.running ? `, ${camera.frames} frames` : ""}`).join(" · ") || "no camera";
      return el("li", { "data-node": host.node },
        el("div", { className: "title" }, el("span", { text: `${host.node}${host.node === fleet.node ? " (this host)" : ""}` }),
          el("span", { className: host.online ? "" : "muted", text: host.online ? "online" : "offline" })),
        el("div", { className: "muted small", text: clock }),
        el("div", { className: "small", text: cameras }),
        ...host.jobs.map((job) => el("div", { className: "job", "data-job": String(job.id) },
          el("div", { className: "small", text: `Job ${job.id} ${job.state} · ${job.camera} · slot ${job.slot}: ${job.taken} taken, ${job.failed} failed, ${job.skipped} skipped` }),
          job.recent.length ? el("ol", { className: "slots", "aria-label": `Job ${job.id}'s latest slots` }, ...job.recent.map(slotItem)) : null)));
    }));
  }

  // ---------------------------------------------------------------- Jobs, history and pictures

  function renderJobs() {
    const jobs = [...state.jobs.values()].sort((a, b) => b.id - a.id);
    $("job-list").replaceChildren(...(jobs.length ? jobs.map((job) => {
      const s = job.summary || {};
      const kind = kindOf(job);
      const what = kind === "video" ? "clips" : kind === "photo-bulb" ? "bulb exposure" : "frames";
      const message = el("p", { className: "message", role: "alert" });
      const item = el("li", {},
        el("div", { className: "title" }, el("span", { text: `Job ${job.id} · ${job.camera}` }), el("span", { className: "muted", text: job.state })),
        el("div", { className: "muted small", text: `${what}: ${s.taken || 0} taken, ${s.failed || 0} failed, ${s.skipped || 0} skipped · every ${formatDuration(job.plan.intervalMs)}${job.t0 ? ` · from ${new Date(Date.parse(job.t0) - state.clockOffset).toLocaleString()}` : ""}` }),
        job.reason ? el("div", { className: "small", text: job.reason }) : null,
        el("button", { type: "button", text: "Frames", onclick: () => openJobDetail(job) }));
      if (isLive(job) && can("operate")) {
        const stop = el("button", { type: "button", className: "danger", text: "Stop" });
        confirmTwice(stop, "Tap again to stop", () => api("POST", `/v1/jobs/${job.id}/stop`, { when: "now" }).catch((error) => setMessage(message, error.message)));
        item.append(" ", stop);
      }
      item.append(message);
      return item;
    }) : [el("li", { className: "muted", text: "No job has run yet." })]));
  }

  let detailSource = null;
  function closeJobDetail() {
    if (detailSource) { detailSource.close(); detailSource = null; }
    $("job-detail").hidden = true;
  }
  /** A job's newest frames from the journal: its event stream replays them (the last 100), then
   *  follows a running job until the view closes. */
  function openJobDetail(job) {
    closeJobDetail();
    const frames = [];
    $("job-detail").hidden = false;
    $("job-detail-title").textContent = `Job ${job.id}`;
    $("job-detail-summary").textContent = "Reading the journal…";
    $("job-detail-frames").replaceChildren();
    const from = Math.max(1, ((job.lastFrame && job.lastFrame.frame) || 1) - 99);
    detailSource = new EventSource(`/v1/jobs/${job.id}/events?from=${from}`);
    let pending = null;
    const draw = () => {
      pending = null;
      $("job-detail-frames").replaceChildren(...frames.slice(-100).reverse().map(frameItem));
      $("job-detail-summary").textContent = `Frames from ${from} on.`;
    };
    detailSource.addEventListener("frame", (event) => {
      frames.push(JSON.parse(event.data));
      if (frames.length > 100) frames.shift();
      if (!pending) pending = requestAnimationFrame(draw);
    });
    detailSource.addEventListener("end", (event) => {
      const end = JSON.parse(event.data);
      const s = end.summary;
      draw();
      $("job-detail-summary").textContent = `${end.state}: ${end.reason}. ${s.taken} taken, ${s.failed} failed, ${s.skipped} skipped; lateness p50 ${formatMicros(s.p50LatenessMicros)}, p99 ${formatMicros(s.p99LatenessMicros)}, max ${formatMicros(s.maxLatenessMicros)}.`;
      closeJobDetailStream();
    });
    detailSource.onerror = (event) => { if (!(event instanceof MessageEvent)) closeJobDetailStream(); };
    $("job-detail").scrollIntoView({ block: "start" });
  }
  function closeJobDetailStream() { if (detailSource) { detailSource.close(); detailSource = null; } }

  /** A saved picture's thumbnail; the daemon serves only pictures its cameras saved, by name. */
  function thumbnailItem(camera, picture) {
    const name = picture.name;
    const label = `${camera}: ${name}${picture.frame ? `, frame ${picture.frame}` : ""}`;
    return el("li", { "data-name": name },
      el("img", { src: camerasPath(camera, `/pictures/${encodeURIComponent(name)}/thumbnail`), alt: label, loading: "lazy", width: "160", height: "107" }),
      el("span", { className: "small muted", text: name }));
  }

  function showThumbnails(camera, pictures) {
    const list = $("thumbs");
    for (const picture of pictures.slice().reverse()) {
      const existing = list.querySelector(`[data-name="${CSS.escape(picture.name)}"]`);
      if (existing) existing.remove();
      list.prepend(thumbnailItem(camera, picture));
    }
    while (list.children.length > 24) list.lastChild.remove();
    $("thumbs-empty").hidden = list.children.length > 0;
  }

  function addThumbnail(saved) {
    if (saved.camera !== shownCamera() || state.picturesShown !== saved.camera) return;
    showThumbnails(saved.camera, [{ name: saved.path.split("/").pop(), frame: saved.frame }]);
  }

  /** The shown camera's saved pictures, read once when the view opens or the camera changes. */
  async function loadPictures() {
    const name = shownCamera();
    if (!name || state.picturesShown === name) return;
    state.picturesShown = name;
    $("thumbs").replaceChildren();
    $("thumbs-empty").hidden = false;
    try {
      const answer = await api("GET", camerasPath(name, "/pictures"));
      if (name === shownCamera()) showThumbnails(name, answer.pictures);
    } catch (error) {
      state.picturesShown = null;
      $("thumbs-empty").textContent = error.message;
    }
  }

  // ---------------------------------------------------------------- start

  /** Asks the daemon who this browser is: paired, the app; not paired, pairing; unreachable
   *  (a daemon still starting, a phone not yet on the network), the same question again shortly. */
  async function start(delay = 1000) {
    try {
      await refreshSession();
      showApp();
    } catch (error) {
      if (error.status === 401) { showPairing(); return; }
      $("pairing").hidden = false;
      $("pair-form").hidden = true;
      $("startup-message").hidden = false;
      setMessage($("startup-message"), `${error.message}. Trying again…`);
      setTimeout(() => start(Math.min(delay * 2, 10000)), delay);
    }
  }
  syncIntervalGrid();
  planPreview();
  start();
})();
