// What frames every mode: pairing or the app, the top bar (connection, demo, the running job,
// the target), the status line, the banners, which mode shows, and what this browser may press.
import { $, el, renderMessage, setAttribute, setHidden, setText } from "./dom.js";
import { wakeWanted } from "./field.js";
import { can, isLive, lastFrame, plannedFrames, runOnTarget, shownCamera } from "./model.js";

export const VIEWS = ["photo", "timelapse", "video", "settings", "cameras", "rig", "jobs", "app"];

/** The connection in a word (the camera is named by the target beside it), and the phase a
 *  screen reader is told of: it hears "ready" or "lost", never each shot's busy. */
export function connectionOf(state) {
  if (state.live !== "open") {
    return state.live === "lost"
      ? { phase: "lost", words: "Reconnecting…", detail: "The daemon cannot be reached: reconnecting…", announce: "Daemon unreachable" }
      : { phase: "busy", words: "Connecting…", detail: "Connecting to the daemon…", announce: "" };
  }
  const name = shownCamera(state);
  const camera = name && state.cameras.get(name);
  const status = (camera && camera.status) || {};
  if (!camera) return { phase: "busy", words: "No camera", detail: "The daemon holds no camera.", announce: "No camera" };
  if (camera.error) return { phase: "lost", words: "Error", detail: `${name}: ${camera.error}`, announce: `${name}: error` };
  if (status.connection === "ready") {
    return { phase: status.busy ? "busy" : "ready", words: status.busy ? "Busy" : "Ready", detail: `${name}: ${status.busy ? "busy" : "ready"}`, announce: `${name} ready` };
  }
  const words = status.connection === "failed" ? "Failed" : status.connection ? status.connection[0].toUpperCase() + status.connection.slice(1) : "Unknown";
  return { phase: status.connection === "failed" ? "lost" : "busy", words, detail: `${name}: ${status.connectionDetail || status.connection || "unknown"}`, announce: `${name}: ${words.toLowerCase()}` };
}

/** Why a control this browser sees is off, in one short line (the banner) and in full (its title). */
export function accessReason(state) {
  const session = state.session;
  if (!session) return null;
  if (session.role === "viewer") {
    return { short: "Viewer: you can watch, not shoot or change anything.", full: "This browser has the viewer role: it can watch, not shoot or change anything. Pair it with an operator code to control the rig." };
  }
  if (session.locked) {
    return { short: "Locked: you can watch and shoot, not change anything.", full: "The daemon is locked: you can watch and shoot, not change settings or start and stop runs (daemon.locked in its configuration)." };
  }
  return null;
}

const storageText = { ok: "Card OK", noCard: "No card", full: "Card full", error: "Card error", readOnly: "Card read-only" };
const powerText = { off: "Camera off", sleeping: "Camera asleep" };

export function mountChrome({ store, actions }) {
  for (const button of document.querySelectorAll("[data-view]")) {
    button.addEventListener("click", () => {
      actions.showView(button.dataset.view);
      closeMenu();
      $("main").focus({ preventScroll: true });
    });
  }
  $("menu-button").addEventListener("click", () => ($("menu").hidden ? openMenu() : closeMenu()));
  $("menu-scrim").addEventListener("click", closeMenu);
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeMenu(); });
  $("target").addEventListener("change", () => actions.setTarget($("target").value));
  $("run-chip").addEventListener("click", () => actions.showView(runOnTarget(store.state, "timelapse") ? "timelapse" : "video"));

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

  let announced = null;
  let shownView = null;
  return function render(state) {
    document.documentElement.dataset.theme = state.theme;
    const scheme = document.querySelector('meta[name="color-scheme"]');
    if (scheme.content !== (state.theme === "light" ? "light" : "dark")) scheme.content = state.theme === "light" ? "light" : "dark";
    setHidden($("pairing"), state.screen === "app");
    setHidden($("app"), state.screen !== "app");
    setHidden($("pair-form"), state.screen !== "pairing");
    setHidden($("startup-message"), state.screen !== "starting");
    setText($("startup-message"), state.startupMessage);
    setText($("pair-error"), state.pairingMessage);
    setText($("pairing-title"), state.screen === "starting" ? "Reaching the daemon" : "Pair this browser");
    setHidden($("pair-help"), state.screen !== "pairing");
    if (state.screen !== "app") return;

    // The mode: one view shown, its tab and menu entry marked.
    if (shownView !== state.view) {
      shownView = state.view;
      for (const view of VIEWS) setHidden($(`view-${view}`), view !== state.view);
      for (const button of document.querySelectorAll("[data-view]")) setAttribute(button, "aria-current", button.dataset.view === state.view ? "page" : null);
      closeMenu();
    }

    const connection = connectionOf(state);
    $("connection").dataset.state = connection.phase;
    setText($("connection-text"), connection.words);
    setAttribute($("connection"), "title", connection.detail);
    if (announced !== connection.announce) {
      announced = connection.announce;
      setText($("connection-announce"), connection.announce);
    }
    document.body.classList.toggle("stale", state.live !== "open");
    setHidden($("demo-badge"), !(state.session && state.session.demo));

    // The target: the daemon's cameras, then its groups.
    const select = $("target");
    const options = [...state.cameras.keys()].map((name) => [`camera:${name}`, name])
      .concat(state.groups.map((group) => [`group:${group.name}`, `${group.name} (group of ${group.cameras.length})`]));
    if (!options.length) options.push(["", "No camera"]);
    const signature = JSON.stringify(options);
    if (select.dataset.options !== signature) {
      select.dataset.options = signature;
      select.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
    }
    if (select.value !== (state.target || "")) select.value = state.target || "";

    // The running job, one tap from any mode.
    const run = runOnTarget(state, "timelapse") || runOnTarget(state, "video");
    setHidden($("run-chip"), !run);
    if (run) {
      const last = lastFrame(state, run);
      const total = plannedFrames(run.plan);
      setText($("run-chip"), `${run.state === "paused" ? "Paused" : "Run"} ${last ? last.frame : 0}/${total || "∞"}`);
      setAttribute($("run-chip"), "aria-label", `Job ${run.id}: frame ${last ? last.frame : 0} of ${total || "no end"}, ${run.state}. Open it.`);
    }

    renderStatusLine(state);

    const reason = accessReason(state);
    setHidden($("access-banner"), !reason);
    setText($("access-banner"), reason ? reason.short : "");
    setAttribute($("access-banner"), "title", reason ? reason.full : null);
    renderMessage($("notice"), state.messages.notice && { ...state.messages.notice, actions: [{ label: "Dismiss", run: () => actions.dismissNotice() }] });
    setHidden($("notice"), !state.messages.notice);
    const field = state.field || {};
    const wakeNote = wakeWanted(state) && field.wakeWhy ? field.wakeWhy : "";
    for (const note of document.querySelectorAll(".wake-note")) { setText(note, wakeNote); setHidden(note, !wakeNote); }
    const offline = state.live === "lost";
    setHidden($("offline-banner"), !offline);
    setText($("offline-banner"), offline ? "The daemon is out of reach: controls are off until it answers again." : "");

  };
}

/** Turns off what this browser may not press, and what needs a daemon out of reach; run after
 *  every view has rendered, so that a control a view has just made is covered too. */
export function applyPermissions(state) {
  if (state.screen !== "app") return;
  const reason = accessReason(state);
  // What this browser may press: the daemon's permissions, and a daemon in reach.
  for (const node of document.querySelectorAll("[data-needs]")) {
    if (node.dataset.describedby === undefined) node.dataset.describedby = node.getAttribute("aria-describedby") || "";
    const permitted = can(state, node.dataset.needs);
    const allowed = permitted && state.live === "open";
    if (node.disabled !== !allowed) node.disabled = !allowed;
    const why = !permitted ? (reason ? reason.full : "This browser may not do this.") : !allowed ? "The daemon is out of reach." : null;
    setAttribute(node, "title", why);
    setAttribute(node, "aria-describedby", why ? (permitted ? "offline-banner" : "access-banner") : (node.dataset.describedby || null));
  }
}

function renderStatusLine(state) {
  const name = shownCamera(state);
  const status = (name && state.cameras.get(name) && state.cameras.get(name).status) || {};
  const battery = (node, label, value) => {
    const low = typeof value === "number" && value <= 15;
    setText(node, value === null || value === undefined ? `${label} –` : `${label} ${value} %${low ? " LOW" : ""}`);
    node.classList.toggle("low", low);
  };
  battery($("camera-battery"), "Camera", status.cameraBattery);
  battery($("module-battery"), "Module", status.moduleBattery);
  setHidden($("module-battery"), status.moduleBattery === null || status.moduleBattery === undefined);
  setText($("camera-card"), status.storage ? storageText[status.storage] || `Card ${status.storage}` : "Card –");
  $("camera-card").classList.toggle("low", !!status.storage && status.storage !== "ok");
  setText($("camera-shots-left"), status.shotsRemaining === null || status.shotsRemaining === undefined ? "" : `${status.shotsRemaining} shots left`);
  const asleep = !!status.cameraPower && status.cameraPower !== "on";
  setHidden($("camera-power"), !asleep);
  setText($("camera-power"), asleep ? powerText[status.cameraPower] || `Camera ${status.cameraPower}` : "");
  $("camera-power").classList.toggle("low", asleep);
}

