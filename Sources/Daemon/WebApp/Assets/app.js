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

  /** "2s", "0.5s", "500ms", "1m", "1h30m" or a bare number of seconds, in milliseconds; NaN otherwise. */
  function parseDuration(text) {
    const trimmed = String(text).trim().toLowerCase().replace(/\s+/g, "");
    if (trimmed === "") return NaN;
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(parseFloat(trimmed) * 1000);
    const units = { h: 3600000, m: 60000, s: 1000, ms: 1 };
    let total = 0;
    let rest = trimmed;
    while (rest.length) {
      const match = /^(\d+(?:\.\d+)?)(ms|h|m|s)/.exec(rest);
      if (!match) return NaN;
      total += parseFloat(match[1]) * units[match[2]];
      rest = rest.slice(match[0].length);
    }
    return Math.round(total);
  }

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

  /** One request; every change carries the page's header, which the daemon asks of a browser. */
  async function api(method, path, body, options = {}) {
    const headers = { "Unleashed-Web": "1", Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, {
        method, headers, credentials: "same-origin", signal: options.signal,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (error.name === "AbortError") throw error;
      throw new APIError(0, { error: { message: "the daemon cannot be reached; check the phone's network" } });
    }
    const text = await response.text();
    let document = null;
    if (text) { try { document = JSON.parse(text); } catch { document = null; } }
    if (response.status === 401 && path !== "/web/pair") showPairing();
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
    /** camera → setting descriptors */
    settings: new Map(),
    /** The daemon's wall clock less this phone's. */
    clockOffset: 0,
    live: "connecting", // connecting | open | lost
    view: stored.get("view", "photo"),
    target: stored.get("target", null),
    lastShot: null,
    photoBulb: false,
    focusHeld: false,
    busyShooting: false,
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
    const names = job.camera.split(",");
    const wanted = targetCameras();
    if (!wanted.length) return false;
    return wanted.length === 1 ? names.includes(wanted[0]) : wanted.every((name) => names.includes(name));
  }
  const liveStates = new Set(["waiting", "running", "paused"]);
  const runningJobs = () => [...state.jobs.values()].filter((job) => liveStates.has(job.state)).sort((a, b) => b.id - a.id);
  const runOnTarget = (kind) => runningJobs().find((job) => jobOnTarget(job) && (!kind || kindOf(job) === kind));

  /** photo-bulb (a one-frame bulb job from Photo mode), video, or timelapse. */
  function kindOf(job) {
    const plan = job.plan;
    if (plan.exposure && plan.exposure.kind === "video") return "video";
    if (plan.frames === 1 && plan.exposure && plan.exposure.kind === "bulb") return "photo-bulb";
    return "timelapse";
  }

  // ---------------------------------------------------------------- the live stream

  let source = null;
  let watchdog = null;
  let retryTimer = null;
  let retryDelay = 1000;

  function connectLive() {
    clearTimeout(retryTimer);
    if (source) source.close();
    state.live = state.live === "open" ? "connecting" : state.live;
    renderConnection();
    source = new EventSource("/v1/live");
    const on = (name, handler) => source.addEventListener(name, (event) => {
      feedWatchdog();
      let data;
      try { data = JSON.parse(event.data); } catch { return; }
      handler(data, name);
    });
    on("snapshot", applySnapshot);
    on("job", applyJob);
    on("frame", applyFrame);
    on("heartbeat", (data) => { state.clockOffset = data.nowUnixMs - Date.now(); });
    on("resync", () => connectLive());
    for (const name of ["connection", "shotCompleted", "settingChanged", "battery", "storage", "cameraPower", "busy",
      "meteredEV", "bulbDeadlineFired", "error", "missedEvents", "fileSaved", "fileNotSaved"]) {
      on(name, applyCameraEvent);
    }
    source.onopen = () => feedWatchdog();
    source.onerror = () => {
      // The browser would retry by itself; the page decides instead, so that a revoked browser
      // is sent to pairing and a lost network is shown.
      source.close();
      source = null;
      lost();
    };
  }

  function feedWatchdog() {
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
      if (error.status === 401) return; // showPairing() took over
    }
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connectLive, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10000);
  }

  // A phone that wakes up or gets its network back reconnects at once, not after the backoff.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && state.session && state.live !== "open") connectLive();
  });
  window.addEventListener("online", () => { if (state.session && state.live !== "open") connectLive(); });

  function applySnapshot(snapshot) {
    retryDelay = 1000;
    state.live = "open";
    state.clockOffset = snapshot.nowUnixMs - Date.now();
    state.cameras = new Map();
    for (const entry of snapshot.cameras) state.cameras.set(entry.name, { name: entry.name, source: entry.source, identity: entry.identity });
    for (const entry of snapshot.status.cameras) {
      const camera = state.cameras.get(entry.name) || { name: entry.name, source: entry.source };
      camera.status = entry.status;
      camera.error = entry.error;
      state.cameras.set(entry.name, camera);
    }
    state.daemonVersion = snapshot.status.version;
    state.groups = snapshot.groups;
    state.jobs = new Map(snapshot.jobs.map((job) => [job.id, job]));
    const frames = new Map();
    for (const entry of snapshot.recentFrames) {
      const known = { frames: [], keys: new Set() };
      for (const frame of entry.frames) addFrame(known, frame);
      frames.set(entry.run, known);
    }
    state.frames = frames;
    chooseTarget();
    renderAll();
    loadSettings();
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

  function applyJob(job) {
    const previous = state.jobs.get(job.id);
    // A run the page showed stays on screen once it ends, with its outcome, until put away.
    if (previous && liveStates.has(previous.state) && !liveStates.has(job.state) && kindOf(job) === "timelapse" && jobOnTarget(job)) {
      state.endedRun = job.id;
    }
    state.jobs.set(job.id, job);
    if (!liveStates.has(job.state) && job.id !== state.endedRun) state.frames.delete(job.id);
    renderRun();
    renderPhoto();
    renderVideo();
    renderJobs();
  }

  function applyFrame(frame) {
    const job = state.jobs.get(frame.run);
    let known = state.frames.get(frame.run);
    if (!known) { known = { frames: [], keys: new Set() }; state.frames.set(frame.run, known); }
    if (!addFrame(known, frame)) return;
    if (job) {
      // The snapshot's summary counted every frame before it; each new one adds to it.
      const summary = job.summary;
      summary[frame.outcome] = (summary[frame.outcome] || 0) + 1;
      if (frame.latenessMicros !== undefined) summary.maxLatenessMicros = Math.max(summary.maxLatenessMicros || 0, frame.latenessMicros);
      job.lastFrame = frame;
      if (job.state === "waiting") job.state = "running";
    }
    renderRun();
    renderPhoto();
  }

  function applyCameraEvent(data, name) {
    const camera = state.cameras.get(data.camera);
    if (!camera) return;
    const status = camera.status || (camera.status = {});
    switch (name) {
      case "connection": status.connection = data.connection; status.connectionDetail = data.connectionDetail; break;
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
    // A camera that comes back (or wakes) may have changed what no event reports: read it once.
    if ((name === "connection" && data.connection === "ready") || (name === "cameraPower" && data.cameraPower === "on")) refreshCamera(data.camera);
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
    if (message) $("pair-error").textContent = message;
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

  $("logout").addEventListener("click", async () => {
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
      node.disabled = !allowed || node.dataset.busy === "1";
      if (!allowed) node.title = reason; else node.removeAttribute("title");
      if (!allowed) node.setAttribute("aria-describedby", "access-banner");
    }
    $("demo-banner").hidden = !session.demo;
    const facts = $("session-facts");
    facts.replaceChildren(
      el("dt", { text: "Name" }), el("dd", { text: session.name }),
      el("dt", { text: "Role" }), el("dd", { text: session.role }),
      el("dt", { text: "May" }), el("dd", { text: session.permissions.join(", ") || "nothing" }),
      el("dt", { text: "Daemon" }), el("dd", { text: `unleashed ${session.version}${session.locked ? " (locked)" : ""}` }),
    );
  }

  // ---------------------------------------------------------------- views, menu, theme

  const views = ["photo", "timelapse", "video", "settings", "cameras", "jobs", "app"];
  function showView(name) {
    if (!views.includes(name)) name = "photo";
    state.view = name;
    stored.set("view", name);
    for (const view of views) $(`view-${view}`).hidden = view !== name;
    for (const button of document.querySelectorAll("[data-view]")) {
      if (button.dataset.view === name) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
    }
    if (name === "settings") loadSettings();
    if (name !== "jobs") closeJobDetail();
    closeMenu();
    tick();
  }
  for (const button of document.querySelectorAll("[data-view]")) {
    button.addEventListener("click", () => { showView(button.dataset.view); $("main").focus({ preventScroll: true }); });
  }

  function openMenu() {
    $("menu").hidden = false;
    $("menu-scrim").hidden = false;
    $("menu-button").setAttribute("aria-expanded", "true");
    ($("menu").querySelector("[aria-current]") || $("menu").querySelector("button")).focus();
  }
  function closeMenu() {
    if ($("menu").hidden) return;
    $("menu").hidden = true;
    $("menu-scrim").hidden = true;
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
    renderAll();
    loadSettings();
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
    applyPermissions();
  }

  function renderConnection() {
    const node = $("connection");
    const text = $("connection-text");
    if (state.live !== "open") {
      node.dataset.state = state.live === "lost" ? "lost" : "busy";
      text.textContent = state.live === "lost" ? "Daemon unreachable: reconnecting…" : "Connecting…";
      return;
    }
    const name = shownCamera();
    const camera = name && state.cameras.get(name);
    if (!camera) { node.dataset.state = "busy"; text.textContent = "No camera"; return; }
    const status = camera.status || {};
    const phase = status.connection;
    if (camera.error) { node.dataset.state = "lost"; text.textContent = `${name}: ${camera.error}`; return; }
    if (phase === "ready") {
      node.dataset.state = status.busy ? "busy" : "ready";
      text.textContent = `${name}: ${status.busy ? "busy" : "ready"}`;
    } else {
      node.dataset.state = phase === "failed" ? "lost" : "busy";
      text.textContent = `${name}: ${status.connectionDetail || phase || "unknown"}`;
    }
  }

  const storageText = { ok: "Card OK", noCard: "No card", full: "Card full", error: "Card error", readOnly: "Card read-only" };
  function renderStatusBars() {
    const name = shownCamera();
    const status = (name && state.cameras.get(name) && state.cameras.get(name).status) || {};
    const percent = (value) => (value === null || value === undefined ? "–" : `${value} %`);
    const battery = (node, label, value) => {
      node.textContent = `${label} ${percent(value)}`;
      node.classList.toggle("low", typeof value === "number" && value <= 15);
    };
    battery($("module-battery"), "Battery", status.moduleBattery);
    $("module-link").textContent = status.connection ? `Link ${status.connection}` : "Link –";
    battery($("camera-battery"), "Battery", status.cameraBattery);
    $("camera-card").textContent = status.storage ? storageText[status.storage] || `Card ${status.storage}` : "Card –";
    $("camera-card").classList.toggle("low", !!status.storage && status.storage !== "ok");
    $("camera-shots-left").textContent = status.shotsRemaining === null || status.shotsRemaining === undefined ? "Shots left –" : `${status.shotsRemaining} shots left`;
    $("camera-ev").textContent = `EV ${status.meteredEV || "–"}`;
    renderMeter(status.meteredEV);
  }

  /** "+12", "-1 1/3", "+0" as a number of stops. */
  function stopsOf(text) {
    if (!text) return null;
    const match = /^([+-]?)(\d+)?(?:\s*(\d)\/(\d))?$/.exec(text.trim());
    if (!match) return null;
    const whole = match[2] ? parseInt(match[2], 10) : 0;
    const fraction = match[3] ? parseInt(match[3], 10) / parseInt(match[4], 10) : 0;
    return (match[1] === "-" ? -1 : 1) * (whole + fraction);
  }

  function renderMeter(text) {
    const stops = stopsOf(text);
    $("ev-reading").textContent = text || "–";
    // The scale spans EV -4 to +20, a night sky to a sunlit snowfield.
    const position = stops === null ? 50 : Math.min(100, Math.max(0, ((stops + 4) / 24) * 100));
    $("ev-needle").style.left = `${position}%`;
    $("evmeter").setAttribute("aria-valuenow", stops === null ? "0" : String(stops));
    $("evmeter").setAttribute("aria-valuetext", text ? `EV ${text}` : "no reading");
  }

  function renderLastShot() {
    const shot = state.lastShot;
    $("shot-counter").textContent = shot ? `#${shot.counter}` : "–";
    $("shot-detail").textContent = shot && shot.latencyMs !== undefined ? `${shot.latencyMs.toFixed(0)} ms from the press` : "";
  }

  function renderPhoto() {
    const bulbJob = runOnTarget("photo-bulb");
    const trigger = $("trigger");
    const label = $("trigger-label");
    $("photo-single").setAttribute("aria-pressed", String(!state.photoBulb));
    $("photo-bulb").setAttribute("aria-pressed", String(state.photoBulb));
    $("bulb-options").hidden = !state.photoBulb;
    if (bulbJob) {
      label.textContent = "Close";
      trigger.setAttribute("aria-label", "Close the shutter now");
    } else {
      label.textContent = state.busyShooting ? "…" : state.photoBulb ? "Bulb" : "Shoot";
      trigger.setAttribute("aria-label", state.photoBulb ? "Open the shutter in bulb" : "Shoot");
    }
    $("trigger-ring").classList.toggle("spinning", state.busyShooting && !bulbJob);
    renderLastShot();
    const settings = state.settings.get(shownCamera()) || [];
    const value = (name) => (settings.find((s) => s.setting === name) || {}).value;
    $("photo-settings").textContent = ["shutter-speed", "aperture", "iso"].map((n) => value(n) && (n === "iso" ? `ISO ${value(n)}` : value(n))).filter(Boolean).join(" · ");
    $("half-press").setAttribute("aria-pressed", String(state.focusHeld));
    $("half-press").textContent = state.focusHeld ? "Let go" : "Focus";
  }

  function renderRun() {
    const ended = state.endedRun !== undefined ? state.jobs.get(state.endedRun) : null;
    const job = runOnTarget("timelapse") || (ended && jobOnTarget(ended) ? ended : null);
    $("run-panel").hidden = !job;
    $("plan-form").hidden = !!job;
    if (!job) return;
    const live = liveStates.has(job.state);
    $("run-controls").hidden = !live;
    $("run-ended").hidden = live;
    const plan = job.plan;
    const known = state.frames.get(job.id) || { frames: [] };
    const last = known.frames[known.frames.length - 1] || job.lastFrame;
    const total = plan.frames || (plan.durationMs ? Math.ceil(plan.durationMs / plan.intervalMs) : null);
    $("run-frame").textContent = `${last ? last.frame : 0} of ${total || "∞"}`;
    const summary = job.summary || {};
    $("run-lateness").textContent = last && last.latenessMicros !== undefined
      ? `${formatMicros(last.latenessMicros)} (max ${formatMicros(summary.maxLatenessMicros)})` : "–";
    $("run-state").textContent = live ? job.state : `${job.state}: ${job.reason || ""}`;
    $("run-summary").textContent = `Job ${job.id} on ${job.camera}: ${summary.taken || 0} taken, ${summary.failed || 0} failed, ${summary.skipped || 0} skipped · every ${formatDuration(plan.intervalMs)}`;
    $("run-pause").textContent = job.state === "paused" ? "Continue" : "Pause";
    const list = $("run-frames");
    list.replaceChildren(...known.frames.slice(-8).reverse().map(frameItem));
    if (!live) {
      $("run-next").textContent = "done";
      $("run-clock").textContent = formatClock(summary.lastMs || 0);
      $("run-ring").style.strokeDashoffset = "0";
    }
    tick();
  }

  function frameItem(frame) {
    return el("li", {},
      el("span", { className: "clock", text: `#${frame.frame}${frame.part > 1 ? `.${frame.part}` : ""}` }),
      el("span", { className: `outcome ${frame.outcome}`, text: frame.outcome }),
      el("span", { text: [frame.camera, frame.exposure, frame.latenessMicros !== undefined ? `late ${formatMicros(frame.latenessMicros)}` : null, frame.error].filter(Boolean).join(" · ") }));
  }

  function renderVideo() {
    const name = shownCamera();
    const recording = name ? stored.get(`recording.${name}`, null) : null;
    $("record").setAttribute("aria-pressed", String(!!recording));
    $("record-label").textContent = recording ? "Stop" : "Record";
    const job = runOnTarget("video");
    $("clips-form").hidden = !!job;
    $("clips-running").hidden = !job;
    if (job) {
      const s = job.summary || {};
      $("clips-running").textContent = `Clips job ${job.id}: ${s.taken || 0} clips of ${formatDuration(job.plan.exposure.clipMs)}, every ${formatDuration(job.plan.intervalMs)} (${job.state}). Stop it from Jobs.`;
    }
    tick();
  }

  // The clocks and rings: drawn a few times a second while something runs, never a request.
  let ticking = null;
  function tick() {
    clearTimeout(ticking);
    let again = false;
    const now = daemonNow();
    const run = runOnTarget("timelapse");
    if (run && state.view === "timelapse" && run.t0) {
      const t0 = Date.parse(run.t0);
      const interval = run.plan.intervalMs;
      const elapsed = now - t0;
      $("run-clock").textContent = elapsed < 0 ? `−${formatClock(-elapsed)}` : formatClock(elapsed);
      let remaining;
      if (run.state === "paused") {
        remaining = NaN;
      } else if (elapsed < 0) {
        remaining = -elapsed;
      } else {
        remaining = interval - (elapsed % interval);
      }
      $("run-next").textContent = isNaN(remaining) ? "paused" : formatClock(remaining + 999);
      $("run-ring").style.strokeDashoffset = String(isNaN(remaining) ? RING : RING * (remaining / interval));
      again = true;
    }
    const bulb = runOnTarget("photo-bulb");
    if (bulb && bulb.t0) {
      const open = now - Date.parse(bulb.t0);
      const length = bulb.plan.exposure.ms;
      $("trigger-state").textContent = `${formatClock(Math.max(0, open))} / ${formatClock(length)}`;
      $("trigger-ring").style.strokeDashoffset = String(RING * (1 - Math.min(1, Math.max(0, open) / length)));
      again = true;
    } else if (!state.busyShooting) {
      $("trigger-state").textContent = "";
      $("trigger-ring").style.strokeDashoffset = String(RING);
    }
    const name = shownCamera();
    const recording = name ? stored.get(`recording.${name}`, null) : null;
    if (recording) {
      $("record-clock").textContent = formatClock(Date.now() - recording);
      $("record-ring").style.strokeDashoffset = String(RING * (1 - ((Date.now() - recording) % 60000) / 60000));
      again = true;
    } else {
      $("record-ring").style.strokeDashoffset = String(RING);
    }
    if (again && document.visibilityState === "visible") ticking = setTimeout(tick, 200);
  }
  document.addEventListener("visibilitychange", tick);

  // ---------------------------------------------------------------- Photo mode

  const forEachTarget = (action) => Promise.all(targetCameras().map((name) => action(name).then(
    (value) => ({ name, value }), (error) => ({ name, error }))));

  function reportFailures(results, node) {
    const failed = results.filter((r) => r.error);
    if (failed.length) {
      setMessage(node, failed.map((r) => (results.length > 1 ? `${r.name}: ${r.error.message}` : r.error.message)).join("; "));
      const bulbRefusal = failed.find((r) => r.error.camera && r.error.camera.case === "notInBulbMode");
      if (bulbRefusal && can("operate")) {
        node.append(" ", el("button", { type: "button", text: "Set shutter speed to bulb", onclick: () => setValue(bulbRefusal.name, "shutter-speed", { value: "bulb" }, node) }));
      }
    }
    return failed.length === 0;
  }

  $("photo-single").addEventListener("click", () => { state.photoBulb = false; renderPhoto(); });
  $("photo-bulb").addEventListener("click", () => { state.photoBulb = true; renderPhoto(); });

  $("trigger").addEventListener("click", async () => {
    const message = $("photo-message");
    if (!targetCameras().length) { setMessage(message, "No camera to shoot with: pick one in Cameras."); return; }
    const bulbJob = runOnTarget("photo-bulb");
    if (bulbJob) {
      try { await api("POST", `/v1/jobs/${bulbJob.id}/stop`, { when: "now" }); } catch (error) { setMessage(message, error.message); }
      return;
    }
    if (state.busyShooting) return;
    setMessage(message, "");
    if (state.photoBulb) {
      const ms = Math.round(parseFloat($("bulb-seconds").value) * 1000);
      if (!(ms >= 1)) { setMessage(message, "Bulb seconds: a number like 4 or 0.5."); return; }
      const names = targetCameras();
      const body = { plan: { intervalMs: ms, frames: 1, exposure: { kind: "bulb", ms } } };
      if (names.length > 1) body.cameras = names; else body.camera = names[0];
      try {
        const job = await api("POST", "/v1/jobs", body);
        applyJob(job);
      } catch (error) {
        reportFailures([{ name: names[0], error }], message);
      }
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
      const outcome = results.map((r) => r.value && r.value.outcome).filter(Boolean);
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

  /** The plan as the API takes it, or a message naming the field that is wrong. */
  function readPlan() {
    const intervalMs = parseDuration($("plan-interval").value);
    if (!(intervalMs > 0)) return { problem: "Interval: write it like 2s, 500ms or 1m." };
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
        if (!(durationMs > 0)) return { problem: "Duration: write it like 90m or 1h30m." };
        plan.durationMs = durationMs;
        break;
      }
      case "until": {
        const until = $("plan-until").value;
        if (!until) return { problem: "End time: pick a time of day." };
        plan.until = until;
        break;
      }
      default: plan.forever = true;
    }
    switch (exposureKind.value) {
      case "bulb": {
        const ms = parseDuration($("plan-bulb").value);
        if (!(ms > 0)) return { problem: "Bulb: write it like 1s or 800ms." };
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
        const gap = parseDuration($("plan-ramp-gap").value);
        if (!isNaN(gap)) ramp.gapMs = gap;
        const night = $("plan-ramp-night").value.trim();
        if (night) {
          ramp.nightIntervalMs = parseDuration(night);
          if (isNaN(ramp.nightIntervalMs)) return { problem: "Night interval: write it like 30s, or leave it empty." };
        }
        if (isNaN(ramp.bulbFromMs)) return { problem: "Bulb from: write it like 1s, or leave it empty for never." };
        plan.exposure = ramp;
        break;
      }
      default: plan.exposure = { kind: "camera" };
    }
    const delay = parseDuration($("plan-delay").value || "0");
    if (isNaN(delay) || delay < 0) return { problem: "Delay: write it like 10s or 0." };
    return { plan, delay };
  }

  function planPreview() {
    const { plan, problem } = readPlan();
    if (problem) { $("plan-preview").textContent = ""; return; }
    const frames = plan.frames || (plan.durationMs ? Math.ceil(plan.durationMs / plan.intervalMs) : null);
    $("plan-preview").textContent = frames
      ? `${frames} frames every ${formatDuration(plan.intervalMs)}: ${formatDuration(frames * plan.intervalMs)}, a ${formatDuration((frames / 25) * 1000)} clip at 25 fps.`
      : `Every ${formatDuration(plan.intervalMs)} until ${plan.until || "stopped"}.`;
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
    $("plan-start").disabled = true;
    try {
      applyJob(await api("POST", "/v1/jobs", body));
    } catch (error) {
      reportFailures([{ name: names[0], error }], message);
    } finally {
      applyPermissions();
    }
  });

  async function runCommand(path, body) {
    const job = runOnTarget("timelapse");
    if (!job) return;
    try {
      const answer = await api("POST", `/v1/jobs/${job.id}/${path}`, body);
      if (answer && answer.id) applyJob(answer);
    } catch (error) {
      setMessage($("plan-message"), error.message);
      $("run-summary").textContent = error.message;
    }
  }
  $("run-pause").addEventListener("click", () => {
    const job = runOnTarget("timelapse");
    runCommand(job && job.state === "paused" ? "continue" : "pause");
  });
  $("run-extra").addEventListener("click", () => runCommand("extra-frame"));
  $("run-new").addEventListener("click", () => { state.endedRun = undefined; renderRun(); $("plan-interval").focus(); });
  $("run-stop-after").addEventListener("click", () => runCommand("stop", { when: "afterFrame" }));
  $("run-stop").addEventListener("click", () => runCommand("stop", { when: "now" }));

  // ---------------------------------------------------------------- Video

  $("record").addEventListener("click", async () => {
    const message = $("video-message");
    const name = shownCamera();
    if (!name) { setMessage(message, "No camera: pick one in Cameras."); return; }
    const key = `recording.${name}`;
    setMessage(message, "");
    if (stored.get(key, null)) {
      const results = await forEachTarget((camera) => api("POST", camerasPath(camera, "/video/stop")));
      stored.remove(key);
      if (reportFailures(results, message)) {
        const clip = results[0].value;
        setMessage(message, clip && clip.lengthMs !== undefined ? `Recorded ${formatDuration(clip.lengthMs)}.` : "Recording stopped.", "ok");
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
    if (!(clipMs > 0)) { setMessage(message, "Clip: write it like 5s."); return; }
    if (!(intervalMs > 0)) { setMessage(message, "Every: write it like 1m."); return; }
    if (!(frames >= 1)) { setMessage(message, "Clips: at least 1."); return; }
    const names = targetCameras();
    if (!names.length) { setMessage(message, "No camera: pick one in Cameras."); return; }
    const body = { plan: { intervalMs, frames, exposure: { kind: "video", clipMs } } };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    try { applyJob(await api("POST", "/v1/jobs", body)); setMessage(message, ""); } catch (error) { setMessage(message, error.message); }
  });

  // ---------------------------------------------------------------- Settings pickers

  let settingsLoading = null;
  async function loadSettings() {
    const name = shownCamera();
    if (!name || state.live !== "open") return;
    const camera = state.cameras.get(name);
    if (camera && camera.identity && !camera.identity.capabilities.includes("readSettings")) {
      state.settings.set(name, []);
      renderSettings();
      return;
    }
    if (settingsLoading === name) return;
    settingsLoading = name;
    try {
      const answer = await api("GET", camerasPath(name, "/settings"));
      state.settings.set(name, answer.settings);
      setMessage($("settings-message"), "");
    } catch (error) {
      setMessage($("settings-message"), error.message);
    } finally {
      settingsLoading = null;
    }
    renderSettings();
    renderPhoto();
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
    if (cameraName === shownCamera()) { renderSettings(); renderPhoto(); }
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
    const focused = document.activeElement && document.activeElement.closest(".setting");
    const focusKey = focused && focused.dataset.setting;
    list.replaceChildren(...settings.map((setting) => settingPicker(name, setting)));
    if (focusKey) {
      const again = list.querySelector(`.setting[data-setting="${CSS.escape(focusKey)}"] [aria-selected="true"]`);
      if (again) again.focus({ preventScroll: true });
    }
    applyPermissions();
  }

  function settingPicker(cameraName, setting) {
    const title = settingTitles[setting.setting] || setting.setting;
    const horizontal = typedSettings.has(setting.setting) || setting.choices.length > 8;
    const message = el("p", { className: "message", role: "alert" });
    const picker = el("div", { className: horizontal ? "hpicker" : "vpicker", role: "listbox", "aria-label": title, "aria-orientation": horizontal ? "horizontal" : "vertical" });
    for (const choice of setting.choices) {
      const selected = choice.raw === setting.raw;
      picker.append(el("button", {
        type: "button", role: "option", "aria-selected": String(selected), "data-needs": setting.readOnly ? "never" : "operate",
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
    requestAnimationFrame(() => {
      const selected = picker.querySelector('[aria-selected="true"]');
      if (selected && horizontal) picker.scrollLeft = selected.offsetLeft - picker.clientWidth / 2 + selected.clientWidth / 2;
    });
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

  // ---------------------------------------------------------------- Jobs, history and pictures

  function renderJobs() {
    const jobs = [...state.jobs.values()].sort((a, b) => b.id - a.id);
    $("job-list").replaceChildren(...(jobs.length ? jobs.map((job) => {
      const s = job.summary || {};
      const item = el("li", {},
        el("div", { className: "title" }, el("span", { text: `Job ${job.id} · ${job.camera}` }), el("span", { className: "muted", text: job.state })),
        el("div", { className: "muted small", text: `${kindOf(job) === "video" ? "clips" : "frames"}: ${s.taken || 0} taken, ${s.failed || 0} failed, ${s.skipped || 0} skipped · every ${formatDuration(job.plan.intervalMs)}${job.t0 ? ` · from ${new Date(Date.parse(job.t0) - state.clockOffset).toLocaleString()}` : ""}` }),
        job.reason ? el("div", { className: "small", text: job.reason }) : null,
        el("button", { type: "button", text: "Frames", onclick: () => openJobDetail(job.id) }));
      if (liveStates.has(job.state) && can("operate")) {
        item.append(" ", el("button", { type: "button", className: "danger", text: "Stop", onclick: () => api("POST", `/v1/jobs/${job.id}/stop`, { when: "now" }).catch((error) => setMessage($("job-detail-summary"), error.message)) }));
      }
      return item;
    }) : [el("li", { className: "muted", text: "No job has run yet." })]));
  }

  let detailSource = null;
  function closeJobDetail() {
    if (detailSource) { detailSource.close(); detailSource = null; }
    $("job-detail").hidden = true;
  }
  /** A job's frames from the journal: its event stream replays them, then follows a running job. */
  function openJobDetail(id) {
    closeJobDetail();
    const frames = [];
    $("job-detail").hidden = false;
    $("job-detail-title").textContent = `Job ${id}`;
    $("job-detail-summary").textContent = "Reading the journal…";
    $("job-detail-frames").replaceChildren();
    detailSource = new EventSource(`/v1/jobs/${id}/events`);
    let pending = null;
    const draw = () => {
      pending = null;
      $("job-detail-frames").replaceChildren(...frames.slice(-100).reverse().map(frameItem));
      $("job-detail-summary").textContent = `${frames.length} records.`;
    };
    detailSource.addEventListener("frame", (event) => {
      frames.push(JSON.parse(event.data));
      if (!pending) pending = requestAnimationFrame(draw);
    });
    detailSource.addEventListener("end", (event) => {
      const end = JSON.parse(event.data);
      const s = end.summary;
      draw();
      $("job-detail-summary").textContent = `${end.state}: ${end.reason}. ${s.taken} taken, ${s.failed} failed, ${s.skipped} skipped; lateness p50 ${formatMicros(s.p50LatenessMicros)}, p99 ${formatMicros(s.p99LatenessMicros)}, max ${formatMicros(s.maxLatenessMicros)}.`;
      closeJobDetailStream();
    });
    detailSource.onerror = () => closeJobDetailStream();
    $("job-detail").scrollIntoView({ block: "start" });
  }
  function closeJobDetailStream() { if (detailSource) { detailSource.close(); detailSource = null; } }

  function addThumbnail(saved) {
    const name = saved.cameraPath.split("/").pop();
    $("thumbs-empty").hidden = true;
    const list = $("thumbs");
    list.prepend(el("li", {}, el("img", {
      src: `${camerasPath(saved.camera, "/thumbnail")}?path=${encodeURIComponent(saved.path)}`,
      alt: `${saved.camera}: ${name}${saved.frame ? `, frame ${saved.frame}` : ""}`, loading: "lazy", width: "160", height: "120",
    })));
    while (list.children.length > 24) list.lastChild.remove();
  }

  // ---------------------------------------------------------------- start

  async function start() {
    try {
      await refreshSession();
      showApp();
    } catch (error) {
      if (error.status !== 401) showPairing(error.message);
    }
  }
  syncIntervalGrid();
  planPreview();
  start();
})();
