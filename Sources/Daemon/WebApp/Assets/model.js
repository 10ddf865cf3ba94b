// The page's one state, and the pure rules that merge what the daemon says into it. Nothing here
// touches the DOM or the network: views render from the state (view-*.js), and the live stream and
// the API's answers come in through these functions (store.js), so Node's test runner checks them
// (Tests/WebApp/unit).

/** A fresh state: nothing heard from the daemon yet; `saved` holds this browser's own choices. */
export function initialState(saved = {}) {
  return {
    /** The daemon's answer to /web/session: who this browser is and what it may do. */
    session: null,
    /** "starting" | "pairing" | "app": which screen shows. */
    screen: "starting",
    pairingMessage: "",
    startupMessage: "",
    /** name → { name, source, identity, status, error } */
    cameras: new Map(),
    groups: [],
    /** id → job document */
    jobs: new Map(),
    /** run id → { frames: [oldest first], keys: Set } */
    frames: new Map(),
    /** camera → setting descriptors, read once a visit and kept current by events */
    settings: new Map(),
    /** The daemon's wall clock less this phone's. */
    clockOffset: 0,
    /** The live stream: "connecting" | "open" | "lost". */
    live: "connecting",
    view: saved.view || "photo",
    target: saved.target || null,
    theme: saved.theme || "dark",
    lastShot: null,
    photoBulb: false,
    focusHeld: false,
    busyShooting: false,
    /** A bulb opened without a job (a locked daemon lets operators shoot, not run jobs). */
    directBulb: null,
    /** The time-lapse that ended while shown, kept on screen with its outcome until put away. */
    endedRun: undefined,
    /** Messages by the place that shows them: { text, kind, actions: [{ label, action }] }. */
    messages: {},
    /** The job whose frames the Jobs view shows, and what its stream brought. */
    detail: null,
    /** The camera whose saved pictures are listed, and the list, newest first. */
    pictures: { camera: null, list: [], problem: "" },
    /** The fleet as the daemon last heard it on its broker (the rig view). */
    fleet: null,
    fleetProblem: "",
    /** A manual recording's start, by target (this browser's: the API does not say). */
    recordings: saved.recordings || {},
    /** The step of a first visit shown, or null. */
    onboarding: null,
  };
}

// ---------------------------------------------------------------- what the state says

/** The cameras the page acts on: one camera, or a group's that the daemon holds. */
export function targetCameras(state) {
  if (!state.target) return [];
  if (state.target.startsWith("group:")) {
    const group = state.groups.find((g) => g.name === state.target.slice(6));
    return group ? group.cameras.filter((name) => state.cameras.has(name)) : [];
  }
  const name = state.target.slice(7);
  return state.cameras.has(name) ? [name] : [];
}

/** The camera whose status, meter and settings the page shows: the target's first. */
export const shownCamera = (state) => targetCameras(state)[0] || null;

/** Whether this browser may do `permission` now: the daemon granted it and can be reached. */
export const can = (state, permission) => !!state.session && state.session.permissions.includes(permission);

/** Whether a job is live (waiting, running or paused) is the daemon's to say. */
export const isLive = (job) => !!job && job.live === true;

/** photo-bulb (a one-frame bulb job from Photo mode), video, or timelapse. */
export function kindOf(job) {
  const plan = job.plan || {};
  if (plan.exposure && plan.exposure.kind === "video") return "video";
  if (plan.frames === 1 && plan.exposure && plan.exposure.kind === "bulb") return "photo-bulb";
  return "timelapse";
}

/** Whether a job runs on exactly the target's cameras (or, for one camera, includes it). */
export function jobOnTarget(state, job) {
  const wanted = targetCameras(state);
  if (!wanted.length) return false;
  return wanted.length === 1 ? job.cameras.includes(wanted[0]) : wanted.every((name) => job.cameras.includes(name));
}

export const runningJobs = (state) => [...state.jobs.values()].filter(isLive).sort((a, b) => b.id - a.id);

/** The newest live job on the target, of `kind` when given. */
export const runOnTarget = (state, kind) => runningJobs(state).find((job) => jobOnTarget(state, job) && (!kind || kindOf(job) === kind));

/** The frames a run's plan asks for, or null for one with no count (until a time, or forever). */
export function plannedFrames(plan) {
  if (plan.frames) return plan.frames;
  if (plan.durationMs && plan.intervalMs) return Math.ceil(plan.durationMs / plan.intervalMs);
  return null;
}

/** A run's newest frame: from the stream, or the one its document carried. */
export function lastFrame(state, job) {
  const known = state.frames.get(job.id);
  return (known && known.frames[known.frames.length - 1]) || job.lastFrame || null;
}

/** When the next slot of a job is due on the daemon's clock (its schedule follows pauses,
 *  re-anchoring and a ramp's interval); NaN when none is to come. */
export const nextSlotAt = (job) => (job && job.nextSlot ? Date.parse(job.nextSlot.at) : NaN);

/**
 * Whether to offer this phone's clock to the daemon: its host clock is not synchronised and
 * nobody has corrected it yet, or it is more than a second from the phone's (`clockOffset` is
 * the daemon's clock less the phone's). The daemon decides whether it takes it.
 */
export function clockWanted(state) {
  const clock = state.hostClock;
  if (!clock || !can(state, "operate")) return false;
  return (!clock.synchronised && !clock.correction) || Math.abs(state.clockOffset) > 1000;
}

/** The daemon's clock in words, for the browser view: whose time it keeps. */
export function hostClockWords(state) {
  const clock = state.hostClock;
  if (!clock) return "";
  if (clock.correction) {
    const by = clock.correction.webClient && state.session && clock.correction.webClient === state.session.client ? "this phone" : clock.correction.client;
    const ahead = clock.correction.offsetMs;
    const behind = `${Math.abs(ahead) >= 1000 ? `${Math.round(Math.abs(ahead) / 1000)} s ${ahead > 0 ? "behind" : "ahead"}` : "within a second"}`;
    return `The daemon goes by the clock of ${by}: its host's clock was ${behind}${clock.synchronised ? "" : " and is not synchronised"}.`;
  }
  return clock.synchronised ? "The daemon's host clock is synchronised." : "The daemon's host clock is not synchronised (no time service, or no network): times of day may be wrong.";
}

/** The wait before the page asks the live stream again after its `attempt`th failure in a row
 *  (1, 2, 4, 8, then 10 s), spread by `jitter` (0..1) so that a rig's phones do not come back
 *  all in the same instant. */
export function reconnectDelay(attempt, jitter = 0) {
  const base = Math.min(1000 * 2 ** Math.max(0, attempt - 1), 10000);
  return Math.round(base * (1 + 0.2 * jitter));
}

// ---------------------------------------------------------------- merging what the daemon says

/** A frame's identity: its slot, its picture in the slot, and in a rig its camera. */
export const frameKey = (frame) => `${frame.frame}/${frame.part}/${frame.camera || ""}`;
const FRAMES_KEPT = 200;

/** Adds a frame to `known` ({ frames, keys }) once, whatever a stream replays, keeping the
 *  newest `limit`; answers whether it was new. */
export function addFrame(known, frame, limit = FRAMES_KEPT) {
  const key = frameKey(frame);
  if (known.keys.has(key)) return false;
  known.keys.add(key);
  known.frames.push(frame);
  if (known.frames.length > limit) known.keys.delete(frameKey(known.frames.shift()));
  return true;
}

/** The live stream's first event: everything the daemon holds, replacing what the page knew. */
export function applySnapshot(state, snapshot, phoneNow) {
  state.live = "open";
  state.busyShooting = false;
  state.clockOffset = snapshot.nowUnixMs - phoneNow;
  const cameras = new Map();
  for (const entry of snapshot.cameras) cameras.set(entry.name, { name: entry.name, source: entry.source, identity: entry.identity });
  for (const entry of snapshot.status.cameras) {
    const camera = cameras.get(entry.name) || { name: entry.name, source: entry.source };
    camera.status = entry.status;
    camera.error = entry.error;
    cameras.set(entry.name, camera);
  }
  state.cameras = cameras;
  state.hostClock = snapshot.status.clock || null;
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
  chooseTarget(state);
}

/** Keeps the target when the daemon still has it; else the first camera. */
export function chooseTarget(state) {
  const valid = (target) => target && (target.startsWith("group:")
    ? state.groups.some((g) => `group:${g.name}` === target)
    : state.cameras.has(target.slice(7)));
  if (!valid(state.target)) {
    const first = state.cameras.keys().next().value;
    state.target = first ? `camera:${first}` : null;
  }
}

const counted = (summary) => (summary.taken || 0) + (summary.failed || 0) + (summary.skipped || 0);

/**
 * A job's document: from the stream (the daemon's word, in order with its frames) or, with
 * `fromAnswer`, from a request's answer, which may arrive after newer news on the stream and so
 * only adds a job the page has not heard of, or gives a newer next slot (notices are numbered).
 */
export function applyJob(state, job, fromAnswer = false) {
  const previous = state.jobs.get(job.id);
  if (previous) {
    if (fromAnswer) {
      // Pause, continue and stop-after-frame answer with the run's state and next slot as they
      // are after the request; the stream tells the same, in order, a moment later.
      if (isLive(previous) && isLive(job)) {
        previous.state = job.state;
        if (job.nextSlot !== undefined) previous.nextSlot = job.nextSlot;
      }
      return;
    }
    // An ended job does not come back to life; an interrupted (suspended) one does, resumed.
    if (!isLive(previous) && isLive(job) && previous.state !== "suspended") return;
    // A document sent just before this page's snapshot may arrive after it: a running job's
    // counts only grow, so the larger ones are the newer.
    if (isLive(job) && counted(previous.summary || {}) > counted(job.summary || {})) {
      job.summary = previous.summary;
      job.lastFrame = previous.lastFrame;
    }
  }
  if (previous && isLive(previous) && !isLive(job) && kindOf(job) === "timelapse" && jobOnTarget(state, job)) {
    state.endedRun = job.id;
  }
  state.jobs.set(job.id, job);
  if (!isLive(job) && job.id !== state.endedRun) state.frames.delete(job.id);
  pruneJobs(state);
}

/** Keeps the live jobs, the interrupted ones (they may be resumed) and the newest 20 ended ones:
 *  a page left open for a night stays small. */
function pruneJobs(state) {
  const ended = [...state.jobs.values()].filter((job) => !isLive(job) && job.state !== "suspended" && job.id !== state.endedRun).sort((a, b) => b.id - a.id);
  for (const job of ended.slice(20)) { state.jobs.delete(job.id); state.frames.delete(job.id); }
}

/** A frame of a run: added once (a reconnect replays), counted into its job's summary. */
export function applyFrame(state, frame) {
  let known = state.frames.get(frame.run);
  if (!known) { known = { frames: [], keys: new Set() }; state.frames.set(frame.run, known); }
  if (!addFrame(known, frame)) return false;
  const job = state.jobs.get(frame.run);
  if (job) {
    // The job's summary counted every frame before its document; each new one adds to it.
    const summary = job.summary || (job.summary = {});
    summary[frame.outcome] = (summary[frame.outcome] || 0) + 1;
    if (frame.latenessMicros !== undefined) summary.maxLatenessMicros = Math.max(summary.maxLatenessMicros || 0, frame.latenessMicros);
    job.lastFrame = frame;
    if (job.state === "waiting") job.state = "running";
  }
  return true;
}

/**
 * A camera's event. Answers what the page should do beyond the state: "refresh" when the camera
 * came back or events were lost, so its document is read again.
 */
export function applyCameraEvent(state, name, data, phoneNow) {
  const camera = state.cameras.get(data.camera);
  if (!camera) return null;
  const status = camera.status || (camera.status = {});
  switch (name) {
    case "connection": status.connection = data.connection; status.connectionDetail = data.connectionDetail; camera.error = null; break;
    case "shotCompleted":
      status.shotCounter = data.counter;
      if (data.camera === shownCamera(state)) state.lastShot = { counter: data.counter, cameraTime: data.cameraTime, at: phoneNow };
      break;
    case "settingChanged": updateSetting(state, data.camera, data); break;
    case "battery": status.moduleBattery = data.moduleBattery; status.cameraBattery = data.cameraBattery; break;
    case "storage": status.storage = data.storage; status.shotsRemaining = data.shotsRemaining; break;
    case "cameraPower": status.cameraPower = data.cameraPower; break;
    case "busy": status.busy = data.busy; break;
    case "meteredEV": status.meteredEV = data.meteredEV; break;
    case "error": if (data.camera === shownCamera(state)) state.messages.photo = { text: `${data.camera}: ${data.message || data.status}`, kind: "error" }; break;
    case "fileSaved": addPicture(state, data.camera, { name: data.path.split("/").pop(), frame: data.frame }); break;
    default: break;
  }
  if ((name === "connection" && data.connection === "ready") || (name === "cameraPower" && data.cameraPower === "on") || name === "missedEvents") return "refresh";
  return null;
}

/** A setting's new value, from an event or an answer, into the settings the page read. */
export function updateSetting(state, cameraName, change) {
  const settings = state.settings.get(cameraName);
  if (!settings) return;
  const setting = settings.find((s) => s.setting === change.setting);
  if (!setting) return;
  setting.value = change.value;
  if (change.raw !== undefined) setting.raw = change.raw;
  else {
    const choice = (setting.choices || []).find((c) => c.value === change.value);
    if (choice) setting.raw = choice.raw;
  }
}

/** A saved picture of the listed camera, newest first, at most 24. */
export function addPicture(state, camera, picture) {
  if (state.pictures.camera !== camera) return;
  const list = state.pictures.list.filter((p) => p.name !== picture.name);
  list.unshift(picture);
  state.pictures.list = list.slice(0, 24);
}

/** A setting's value as shown, by name: "1/125", "f/8", "400". */
export function settingValue(state, camera, name) {
  const settings = state.settings.get(camera) || [];
  const setting = settings.find((s) => s.setting === name);
  return setting ? setting.value : null;
}
