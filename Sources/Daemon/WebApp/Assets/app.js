// unleashed web app: the daemon's control API in a phone's browser.
//
// One store holds the page's state (model.js); the live stream (/v1/live) and the API's answers
// change it, and every view renders from the whole of it after each change (view-*.js), so no
// update is forgotten by a view nobody thought to redraw. Every decision about cameras and runs
// is the daemon's: the page sends requests, shows the daemon's answers and refusals word for
// word, and keeps nothing of its own but this browser's choices (theme, view, target).
import { $ } from "./dom.js";
import { api, camerasPath, onUnpaired } from "./api.js";
import { createStore, saved } from "./store.js";
import { LiveStream } from "./live.js";
import { addFrame, applyJob, can, clockWanted, initialState, isLive, runOnTarget, shownCamera, targetCameras, updateSetting } from "./model.js";
import { parseDuration, parseFieldDuration, parseTimeOfDay } from "./grammar.js";
import { formatDuration } from "./format.js";
import { applyPermissions, mountChrome, VIEWS } from "./view-chrome.js";
import { mountPhoto } from "./view-photo.js";
import { mountTimelapse } from "./view-timelapse.js";
import { mountVideo } from "./view-video.js";
import { mountSettings, SETTING_TITLES } from "./view-settings.js";
import { mountCameras } from "./view-cameras.js";
import { mountRig } from "./view-rig.js";
import { mountJobs } from "./view-jobs.js";
import { mountBrowser } from "./view-browser.js";
import { Field } from "./field.js";
import { mountOnboarding, onboardingSteps } from "./view-onboarding.js";

const store = createStore(initialState({
  view: saved.get("view", "photo"), target: saved.get("target", null), theme: saved.get("theme", "dark"), recordings: saved.get("recordings", {}),
}));
const { state } = store;
if (!VIEWS.includes(state.view)) state.view = "photo";

// The grammar, for the tests that hold it to the daemon's.
window.unleashedGrammar = Object.freeze({ parseDuration, parseTimeOfDay });
// The state, for the browser tests that check what the page believes (read-only by convention).
window.unleashedState = state;

const field = new Field(store);

const say = (key, text, kind = "error", actions = []) => store.update((s) => { s.messages[key] = text ? { text, kind, actions } : null; });
const forEachTarget = (action) => Promise.all(targetCameras(state).map((name) => action(name).then(
  (value) => ({ name, value }), (error) => ({ name, error }))));

/** Shows the daemon's words for what failed; for a camera's refusal, what would mend it. */
function reportFailures(results, key) {
  const failed = results.filter((r) => r.error && r.error.name !== "AbortError");
  if (!failed.length) return true;
  const text = failed.map((r) => (results.length > 1 ? `${r.name}: ${r.error.message}` : r.error.message)).join("; ");
  const remedies = [];
  const bulbRefusal = failed.find((r) => r.error.camera && r.error.camera.case === "notInBulbMode");
  if (bulbRefusal && can(state, "operate")) {
    remedies.push({ label: "Set shutter speed to bulb", run: () => actions.setValue(bulbRefusal.name, "shutter-speed", { value: "bulb" }, key) });
  }
  say(key, text, "error", remedies);
  return false;
}

const live = new LiveStream(store, {
  snapshot: (reconnected) => { actions.loadSettings(reconnected); actions.loadPictures(); actions.offerClock(); },
  refresh: (camera) => actions.refreshCamera(camera),
  lost: async () => {
    try {
      await refreshSession();
    } catch (error) {
      if (error.status === 401) { showPairing("This browser is no longer paired: enter a new code."); return false; }
    }
    return true;
  },
});

async function refreshSession() {
  const session = await api("GET", "/web/session");
  store.update((s) => { s.session = session; });
  return session;
}

function showPairing(message) {
  live.close();
  // Nothing of the paired page goes on asking: the rig's reads, a job's frames, the position.
  clearTimeout(rigTimer);
  actions.closeJobDetail();
  field.geotag(false);
  store.update((s) => { s.session = null; s.screen = "pairing"; s.pairingMessage = message || ""; });
  fillCodeFromAddress();
  queueMicrotask(() => $("pair-code").focus());
}
onUnpaired(() => showPairing("This browser is no longer paired: enter a new code."));

/** The QR code's address carries the code (`#code=123456`): the person only confirms it. */
function fillCodeFromAddress() {
  const code = /[#&]code=(\d{6})/.exec(location.hash);
  if (code && state.screen !== "app") $("pair-code").value = code[1];
}
window.addEventListener("hashchange", fillCodeFromAddress);

function showApp() {
  if (/code=/.test(location.hash)) history.replaceState(null, "", location.pathname);
  Field.checkShell();
  store.update((s) => { s.screen = "app"; if (!saved.get("onboarded", false)) s.onboarding = 0; });
  actions.showView(state.view);
  live.open();
}

$("pair-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const code = $("pair-code").value.replace(/[\s-]/g, "");
  if (!/^\d{6}$/.test(code)) { store.update((s) => { s.pairingMessage = "A pairing code is six digits."; }); return; }
  store.update((s) => { s.pairingMessage = ""; });
  $("pair-submit").disabled = true;
  try {
    const session = await api("POST", "/web/pair", { code });
    store.update((s) => { s.session = session; });
    showApp();
  } catch (error) {
    store.update((s) => { s.pairingMessage = error.message; });
    $("pair-code").select();
  } finally {
    $("pair-submit").disabled = false;
  }
});

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && state.session) live.reconnectIfStale();
  store.update();
});
window.addEventListener("online", () => { if (state.session) live.reconnectIfStale(); });

// ---------------------------------------------------------------- what a press does

let rigTimer = null;
let startingPlan = false;
/** Offered once a visit: the daemon's answer stands until the page is opened again. */
let clockOffered = false;
let detailSource = null;
let detailRetry = null;
const settingsLoading = new Set();
const refreshing = new Set();

const actions = {
  showView(name) {
    if (!VIEWS.includes(name)) name = "photo";
    saved.set("view", name);
    store.update((s) => { s.view = name; });
    if (name === "settings") actions.loadSettings();
    if (name === "jobs") actions.loadPictures();
    if (name === "rig") actions.loadRig();
    if (name !== "jobs") actions.closeJobDetail();
  },

  setTarget(target) {
    saved.set("target", target || null);
    // A message's buttons act on the camera they were said of: they go with it.
    store.update((s) => { s.target = target || null; s.lastShot = null; s.messages = {}; });
    actions.loadSettings();
    actions.loadPictures();
  },

  setTheme(theme) {
    saved.set("theme", theme);
    store.update((s) => { s.theme = theme; });
  },

  async trigger(bulbText) {
    if (!targetCameras(state).length) { say("photo", "No camera to shoot with: pick one in Cameras."); return; }
    const bulbJob = runOnTarget(state, "photo-bulb");
    if (state.directBulb) { state.directBulb.controller.abort(); return; }
    if (bulbJob) {
      try { await api("POST", `/v1/jobs/${bulbJob.id}/stop`, { when: "now" }); } catch (error) { say("photo", error.message); }
      return;
    }
    const run = runOnTarget(state, "timelapse");
    if (run) {
      try { await api("POST", `/v1/jobs/${run.id}/extra-frame`); say("photo", `Extra frame asked of job ${run.id}.`, "ok"); } catch (error) { say("photo", error.message); }
      return;
    }
    if (state.busyShooting) return;
    say("photo", "");
    if (state.photoBulb) {
      const ms = parseFieldDuration(bulbText, 1000);
      if (!(isFinite(ms) && ms >= 1)) { say("photo", "Bulb: seconds like 4 or 0,5, or a duration like 2m."); return; }
      await (can(state, "operate") ? bulbAsJob(ms) : bulbWhileHere(ms));
      return;
    }
    store.update((s) => { s.busyShooting = true; });
    const results = await forEachTarget((name) => api("POST", camerasPath(name, "/shoot")));
    const shot = results.find((r) => r.value && r.name === shownCamera(state));
    store.update((s) => {
      s.busyShooting = false;
      if (shot) s.lastShot = { counter: shot.value.counter, latencyMs: shot.value.latencyMs, at: Date.now() };
    });
    if (reportFailures(results, "photo") && results.length > 1) say("photo", `${results.length} cameras fired.`, "ok");
  },

  async focus() {
    say("photo", "");
    if (state.focusHeld) {
      store.update((s) => { s.focusHeld = false; });
      reportFailures(await forEachTarget((name) => api("POST", camerasPath(name, "/release"))), "photo");
      return;
    }
    store.update((s) => { s.focusHeld = true; });
    const results = await forEachTarget((name) => api("POST", camerasPath(name, "/focus"), { hold: true }));
    if (reportFailures(results, "photo")) {
      const outcome = results.map((r) => r.value && r.value.result).filter(Boolean);
      say("photo", `Focus: ${outcome.join(", ") || "held"}. Press again to let go.`, "ok");
    } else {
      store.update((s) => { s.focusHeld = false; });
    }
  },

  async startTimelapse({ plan, delay, problem }) {
    if (problem) { say("plan", problem); return; }
    if (startingPlan) return; // a double tap starts one run
    startingPlan = true;
    const names = targetCameras(state);
    if (!names.length) { say("plan", "No camera to run on: pick one in Cameras."); return; }
    const body = { plan, startDelayMs: delay };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    say("plan", "");
    say("run", "");
    try {
      const job = await api("POST", "/v1/jobs", body);
      store.update((s) => applyJob(s, job, true));
    } catch (error) {
      reportFailures([{ name: names[0], error }], "plan");
    } finally {
      startingPlan = false;
    }
  },

  /** A job's command (pause, continue, extra-frame, stop); its answer or refusal under `key`. */
  async runCommand(job, path, body, key = "run") {
    if (!job) return;
    say(key, "");
    try {
      const answer = await api("POST", `/v1/jobs/${job.id}/${path}`, body);
      if (path === "stop" && body && body.when === "afterFrame") say(key, "The run stops after this frame.", "ok");
      if (path === "extra-frame") say(key, "Extra frame asked.", "ok");
      // Pause, continue and stop answer with the run as they left it; an extra frame's answer
      // comes after its exposure, when the stream may have newer news.
      if (answer && answer.id && path !== "extra-frame") store.update((s) => applyJob(s, answer, true));
    } catch (error) {
      say(key, error.message);
    }
  },

  async record() {
    const target = state.target;
    if (!targetCameras(state).length) {
      store.update((s) => { if (target) delete s.recordings[target]; });
      saved.set("recordings", state.recordings);
      say("video", "No camera: pick one in Cameras.");
      return;
    }
    say("video", "");
    if (state.recordings[target]) {
      const results = await forEachTarget((camera) => api("POST", camerasPath(camera, "/video/stop")));
      // A camera that says it records nothing (it stopped by itself: a full card, its own limit)
      // has no recording for the page to keep either.
      const notRecording = results.length && results.every((r) => r.value || (r.error && r.error.status === 409));
      if (reportFailures(results, "video") || notRecording) {
        store.update((s) => { delete s.recordings[target]; });
        const clip = results[0].value;
        say("video", clip && clip.ms !== undefined ? `Recorded ${formatDuration(clip.ms)}.` : "Recording stopped.", "ok");
      }
    } else {
      const results = await forEachTarget((camera) => api("POST", camerasPath(camera, "/video/start")));
      if (reportFailures(results, "video")) store.update((s) => { s.recordings[target] = Date.now(); });
    }
    saved.set("recordings", state.recordings);
  },

  async startClips(clipText, intervalText, countText) {
    const clipMs = parseDuration(clipText);
    const intervalMs = parseDuration(intervalText);
    const frames = Number(String(countText).trim());
    if (!(isFinite(clipMs) && clipMs > 0)) { say("clips", "Clip: write it like 5s."); return; }
    if (!(isFinite(intervalMs) && intervalMs > 0)) { say("clips", "Every: write it like 1m."); return; }
    if (!(Number.isInteger(frames) && frames >= 1)) { say("clips", "Clips: a whole number, at least 1."); return; }
    const names = targetCameras(state);
    if (!names.length) { say("clips", "No camera: pick one in Cameras."); return; }
    const body = { plan: { intervalMs, frames, exposure: { kind: "video", clipMs } } };
    if (names.length > 1) body.cameras = names; else body.camera = names[0];
    try {
      const job = await api("POST", "/v1/jobs", body);
      store.update((s) => applyJob(s, job, true));
      say("clips", "");
    } catch (error) { say("clips", error.message); }
  },

  /** Sets a value; a refusal shows the daemon's words and, for a value not offered, the nearest choices. */
  async setValue(cameraName, settingName, body, key = "settings") {
    say(key, "");
    try {
      const answer = await api("PUT", camerasPath(cameraName, `/settings/${encodeURIComponent(settingName)}`), body);
      store.update((s) => updateSetting(s, cameraName, answer));
      say(key, `${SETTING_TITLES[answer.setting] || answer.setting} is ${answer.value}.`, "ok");
    } catch (error) {
      const refusal = error.camera;
      const nearest = refusal && refusal.case === "valueNotOffered" && refusal.nearest ? refusal.nearest : [];
      say(key, error.message + (nearest.length ? " Nearest:" : ""), "error",
        nearest.map((choice) => ({ label: choice.value, run: () => actions.setValue(cameraName, settingName, { raw: choice.raw }, key) })));
    }
  },

  /** Reads the shown camera's settings over the radio once a visit (or again with `force`);
   *  `settingChanged` events keep them current, so a run's link is not asked twice. */
  async loadSettings(force = false) {
    const name = shownCamera(state);
    if (!name || state.live !== "open") return;
    if (state.settings.has(name) && !force) { store.update(); return; }
    const camera = state.cameras.get(name);
    if (camera && camera.identity && !camera.identity.capabilities.includes("readSettings")) {
      store.update((s) => { s.settings.set(name, []); });
      return;
    }
    if (settingsLoading.has(name)) return;
    settingsLoading.add(name);
    try {
      const answer = await api("GET", camerasPath(name, "/settings"));
      store.update((s) => { s.settings.set(name, answer.settings); });
      say("settings", "");
    } catch (error) {
      say("settings", error.message);
    } finally {
      settingsLoading.delete(name);
    }
  },

  async refreshCamera(name) {
    if (refreshing.has(name)) return;
    refreshing.add(name);
    try {
      const document = await api("GET", camerasPath(name));
      store.update((s) => {
        const camera = s.cameras.get(name);
        if (camera) { camera.status = document.status; camera.identity = document.identity; camera.error = null; }
      });
    } catch { /* the next event or snapshot brings it */ } finally {
      refreshing.delete(name);
    }
  },

  /** The shown camera's saved pictures, read when the camera changes; `fileSaved` adds to them. */
  async loadPictures() {
    const name = shownCamera(state);
    if (!name || state.pictures.camera === name || state.live !== "open") return;
    store.update((s) => { s.pictures = { camera: name, list: [], problem: "" }; });
    try {
      const answer = await api("GET", camerasPath(name, "/pictures"));
      store.update((s) => { if (s.pictures.camera === name) s.pictures.list = answer.pictures.slice(-24).reverse(); });
    } catch (error) {
      store.update((s) => { s.pictures = { camera: null, list: [], problem: error.message }; });
    }
  },

  /** While the rig view is open, the fleet as the daemon hears it on its broker, every second. */
  async loadRig() {
    clearTimeout(rigTimer);
    if (state.view !== "rig" || state.screen !== "app") return;
    try {
      const fleet = await api("GET", "/v1/fleet", undefined, { timeoutMs: 5000 });
      store.update((s) => { s.fleet = fleet; s.fleetProblem = ""; });
    } catch (error) {
      store.update((s) => { s.fleetProblem = error.message; });
    }
    if (state.view === "rig" && state.screen === "app") rigTimer = setTimeout(() => actions.loadRig(), 1000);
  },

  /** A job's newest frames from the journal: its event stream replays them (the last 100), then
   *  follows a running job until the view closes, and takes up where it was after a loss. */
  openJobDetail(id) {
    actions.closeJobDetail();
    const job = state.jobs.get(id);
    if (!job) return;
    const first = Math.max(1, ((job.lastFrame && job.lastFrame.frame) || 1) - 99);
    store.update((s) => { s.detail = { job: id, frames: [], keys: new Set(), summary: "Reading the journal…", failures: 0 }; });
    followJobDetail(id, first);
    // Once drawn: the panel is hidden until the render that follows.
    queueMicrotask(() => $("job-detail").scrollIntoView({ block: "start" }));
  },

  closeJobDetail() {
    clearTimeout(detailRetry);
    if (detailSource) { detailSource.close(); detailSource = null; }
    if (state.detail) store.update((s) => { s.detail = null; });
  },

  async logout() {
    try {
      await api("POST", "/web/logout");
    } catch (error) {
      if (error.status === 403) { say("browsers", error.message); return; }
    }
    showPairing("This browser is no longer paired.");
  },

  /** Takes up an interrupted run on its original schedule (the daemon's own resumption). */
  async resumeJob(id) {
    say(`job:${id}`, "");
    try {
      const job = await api("POST", `/v1/jobs/${id}/resume`);
      // The stream tells the run going again, in order with its frames; the answer adds only
      // what the page has not heard of.
      store.update((s) => applyJob(s, job, true));
      say(`job:${id}`, `Job ${id} resumed.`, "ok");
    } catch (error) { say(`job:${id}`, error.message); }
  },

  async makeCode(role) {
    say("browsers", "");
    try {
      const code = await api("POST", "/v1/web/codes", { role });
      store.update((s) => { s.viewerCode = code; });
    } catch (error) { say("browsers", error.message); }
  },

  async loadBrowsers() {
    try {
      const answer = await api("GET", "/v1/web/clients");
      store.update((s) => { s.browsers = answer.clients; });
    } catch (error) { say("browsers", error.message); }
  },

  dismissNotice() { say("notice", ""); },

  /** Moves a first visit's steps on; past the last, or null, ends them for this browser. */
  onboard(step) {
    const done = step === null || step >= onboardingSteps(state).length;
    if (done) saved.set("onboarded", true);
    store.update((s) => { s.onboarding = done ? null : step; });
  },

  /** Gives the daemon this phone's clock when its host's is not synchronised or is off by more
   *  than a second (a Pi with no clock battery, off the network). The daemon decides, keeps a
   *  correction for times of day and the cameras' clocks, and never moves a running schedule;
   *  a correction that moves its clock restarts the live stream, which brings the new state. */
  async offerClock() {
    if (!clockWanted(state) || clockOffered) return;
    clockOffered = true;
    try {
      const offer = await api("PUT", "/v1/clock", { unixMs: Date.now() });
      store.update((s) => { s.hostClock = offer.clock; });
      // A correction of milliseconds is not news; one of seconds or hours is.
      if (offer.taken && Math.abs(offer.differenceMs) >= 1000) say("notice", `The daemon now keeps this phone's time: ${offer.message}`, "ok");
    } catch (error) {
      say("notice", `The daemon's clock could not be set from this phone: ${error.message}`);
    }
  },
  askToNotify() { return field.askToNotify(); },
  geotag(on) { field.geotag(on); },

  async revokeBrowser(id) {
    try {
      await api("DELETE", `/v1/web/clients/${encodeURIComponent(id)}`);
      say("browsers", "Revoked: that browser must pair again.", "ok");
      await actions.loadBrowsers();
    } catch (error) { say("browsers", error.message); }
  },
};

function followJobDetail(id, from) {
  const source = new EventSource(`/v1/jobs/${id}/events?from=${from}`);
  detailSource = source;
  const current = () => detailSource === source && state.detail && state.detail.job === id;
  source.addEventListener("frame", (event) => {
    if (!current()) return;
    let frame;
    try { frame = JSON.parse(event.data); } catch { return; }
    store.update((s) => {
      const detail = s.detail;
      detail.failures = 0;
      if (!addFrame(detail, frame, 100)) return;
      detail.summary = `Frames from ${detail.frames[0].frame} on.`;
    });
  });
  source.addEventListener("end", (event) => {
    if (!current()) return;
    let end;
    try { end = JSON.parse(event.data); } catch { return; }
    const s = end.summary;
    const us = (value) => (value === undefined || value === null ? "–" : `${(value / 1000).toFixed(2)} ms`);
    store.update((st) => { st.detail.summary = `${end.state}: ${end.reason}. ${s.taken} taken, ${s.failed} failed, ${s.skipped} skipped; lateness p50 ${us(s.p50LatenessMicros)}, p99 ${us(s.p99LatenessMicros)}, max ${us(s.maxLatenessMicros)}.`; });
    source.close();
    detailSource = null;
  });
  source.onerror = (event) => {
    if (event instanceof MessageEvent || !current()) return;
    source.close();
    detailSource = null;
    // Lost before the end: take up after the last frame shown, once the daemon answers again.
    const detail = state.detail;
    detail.failures += 1;
    const last = detail.frames[detail.frames.length - 1];
    store.update((s) => { s.detail.summary = "Connection lost: reconnecting…"; });
    detailRetry = setTimeout(() => { if (current() || (state.detail && state.detail.job === id && !detailSource)) followJobDetail(id, last ? last.frame + 1 : from); },
      Math.min(1000 * 2 ** (detail.failures - 1), 10000));
  };
}

/** A bulb exposure as a one-frame job: journalled, timed by the daemon, and not ended by this
 *  page going away (a phone that locks mid-exposure). */
async function bulbAsJob(ms) {
  const names = targetCameras(state);
  const body = { plan: { intervalMs: ms, frames: 1, exposure: { kind: "bulb", ms } } };
  if (names.length > 1) body.cameras = names; else body.camera = names[0];
  try {
    const job = await api("POST", "/v1/jobs", body);
    store.update((s) => applyJob(s, job, true));
  } catch (error) {
    reportFailures([{ name: names[0], error }], "photo");
  }
}

/** A bulb exposure while this page waits for it: what a locked daemon allows (shooting, not
 *  jobs). Close, or the page going away, ends it early; the camera closes the shutter. */
async function bulbWhileHere(ms) {
  const controller = new AbortController();
  store.update((s) => { s.directBulb = { ms, opened: Date.now(), controller }; });
  const results = await forEachTarget((name) => api("POST", camerasPath(name, "/bulb"), { ms }, { signal: controller.signal, timeoutMs: ms + 30000 }));
  const exposed = results.find((r) => r.value);
  store.update((s) => {
    s.directBulb = null;
    if (exposed) s.lastShot = { counter: exposed.value.shot.counter, latencyMs: exposed.value.shot.latencyMs, at: Date.now() };
  });
  if (exposed) say("photo", `Bulb ${exposed.value.ending === "stoppedEarly" ? "closed early" : "done"}${exposed.value.exposedMs ? `: ${formatDuration(exposed.value.exposedMs)}` : ""}.`, "ok");
  if (controller.signal.aborted) say("photo", "Bulb closed.", "ok");
  reportFailures(results, "photo");
}

// ---------------------------------------------------------------- rendering

const context = { store, actions };
const chrome = mountChrome(context);
const views = [mountPhoto, mountTimelapse, mountVideo, mountSettings, mountCameras, mountRig, mountJobs, mountBrowser, mountOnboarding].map((mount) => mount(context));

// The clocks: each view says when it next needs drawing (a second changing, a ring moving);
// the soonest is awaited while the page is in sight, and nothing is drawn in between.
let ticking = null;
store.subscribe((current) => {
  chrome(current);
  if (current.screen !== "app") return;
  let wait = Infinity;
  // A view that fails to draw (a document shaped in a way it did not expect) leaves the others
  // drawing: the failure goes to the console, and the page goes on.
  for (const render of views) {
    try {
      const next = render(current);
      if (Number.isFinite(next)) wait = Math.min(wait, next);
    } catch (error) {
      console.error("a view failed to draw:", error);
    }
  }
  applyPermissions(current);
  field.follow(current);
  clearTimeout(ticking);
  if (wait !== Infinity && document.visibilityState === "visible") ticking = setTimeout(() => store.update(), Math.max(50, wait + 5));
});

/** Asks the daemon who this browser is: paired, the app; not paired, pairing; unreachable
 *  (a daemon still starting, a phone not yet on the network), the same question again shortly. */
async function start(delay = 1000) {
  try {
    await refreshSession();
    showApp();
  } catch (error) {
    if (error.status === 401) { showPairing(); return; }
    // The page itself came from the service worker's copy, or the daemon is still starting.
    const why = error.status ? error.message : "the phone may have left the Pi's network, or the daemon is not running";
    store.update((s) => { s.screen = "starting"; s.startupMessage = `The daemon is out of reach: ${why}. Trying again in ${Math.round(delay / 1000)} s…`; });
    setTimeout(() => start(Math.min(delay * 2, 10000)), delay);
  }
}
store.update();
Field.keepShell();
start();
