// The intervalometer: the plan's form, and while a run goes the ring counting down to the
// daemon's next slot, its clock, counts, lateness and last frames, with pause, extra frame and stop.
import { $, confirmTwice, el, radioGroup, reconcile, renderMessage, setHidden, setText } from "./dom.js";
import { formatClock, formatDuration, formatLateness, formatLatenessPair, formatStops } from "./format.js";
import { parseDuration } from "./grammar.js";
import { frameKey, isLive, jobOnTarget, lastFrame, nextSlotAt, plannedFrames, runOnTarget, settingValue } from "./model.js";
import { planPreview, readPlan } from "./plan.js";
import { setRing, untilNextSecond } from "./clock.js";
import { mountLastPicture } from "./view-picture.js";
import { polylinePoints } from "./graph.js";

const INTERVALS = ["1s", "2s", "3s", "5s", "10s", "15s", "30s", "1m"];

/** A frame as a line of a list: its number, outcome, and what is known of it. */
export function frameLine(frame) {
  const details = [frame.camera, frame.exposure, frame.meteredEV ? `EV ${frame.meteredEV}` : null,
    frame.latenessMicros !== undefined ? `late ${formatLateness(frame.latenessMicros)}` : null, frame.error];
  return { number: `#${frame.frame}${frame.part > 1 ? `.${frame.part}` : ""}`, outcome: frame.outcome, details: details.filter(Boolean).join(" · ") };
}

export function frameItem() {
  return el("li", {}, el("span", { className: "clock" }), el("span", { className: "outcome" }), el("span", {}));
}

export function updateFrameItem(node, frame) {
  const line = frameLine(frame);
  const [number, outcome, details] = node.children;
  setText(number, line.number);
  setText(outcome, line.outcome);
  outcome.className = `outcome ${line.outcome}`;
  setText(details, line.details);
}


/** The run the view shows: the target's live time-lapse, or the one that just ended there. */
export function shownRun(state) {
  const ended = state.endedRun !== undefined ? state.jobs.get(state.endedRun) : null;
  return runOnTarget(state, "timelapse") || (ended && jobOnTarget(state, ended) ? ended : null);
}

export function mountTimelapse({ store, actions }) {
  $("interval-grid").replaceChildren(...INTERVALS.map((text) => el("button", {
    type: "button", role: "radio", "aria-checked": "false", "data-needs": "operate", text,
    onclick: () => { $("plan-interval").value = text; store.update(); },
  })));
  const form = $("plan-form");
  const kinds = {
    stop: radioGroup($("stop-kind"), () => store.update()),
    exposure: radioGroup($("exposure-kind"), () => store.update()),
    overrun: radioGroup($("overrun-kind"), () => store.update()),
  };
  for (const input of form.querySelectorAll("input")) input.addEventListener("input", () => store.update());
  const value = (id) => $(id).value;
  const formValues = () => ({
    interval: value("plan-interval"), stop: kinds.stop.value, frames: value("plan-frames"), duration: value("plan-duration"),
    until: value("plan-until"), exposure: kinds.exposure.value, bulb: value("plan-bulb"),
    bracketCount: value("plan-bracket-count"), bracketStep: value("plan-bracket-step"),
    rampMinISO: value("plan-ramp-min-iso"), rampMaxISO: value("plan-ramp-max-iso"), rampBulbFrom: value("plan-ramp-bulb-from"),
    rampGap: value("plan-ramp-gap"), rampNight: value("plan-ramp-night"), overrun: kinds.overrun.value, delay: value("plan-delay"),
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    actions.startTimelapse(readPlan(formValues(), Date.now(), store.state.clockOffset));
  });
  $("run-pause").addEventListener("click", () => {
    const job = runOnTarget(store.state, "timelapse");
    if (job) actions.runCommand(job, job.state === "paused" ? "continue" : "pause");
  });
  $("run-extra").addEventListener("click", () => { const job = runOnTarget(store.state, "timelapse"); if (job) actions.runCommand(job, "extra-frame"); });
  $("run-stop-after").addEventListener("click", () => { const job = runOnTarget(store.state, "timelapse"); if (job) actions.runCommand(job, "stop", { when: "afterFrame" }); });
  confirmTwice($("run-stop"), "Tap again to stop", () => { const job = runOnTarget(store.state, "timelapse"); if (job) actions.runCommand(job, "stop", { when: "now" }); });
  const picture = mountLastPicture($("run-picture"));
  $("run-new").addEventListener("click", () => {
    store.update((state) => { state.endedRun = undefined; });
    queueMicrotask(() => $("plan-interval").focus()); // once the form is drawn
  });

  return function render(state) {
    if (state.view !== "timelapse") return Infinity;
    const job = shownRun(state);
    setHidden($("run-panel"), !job);
    setHidden($("plan-form"), !!job);
    if (!job) {
      const wanted = parseDuration(value("plan-interval"));
      for (const button of $("interval-grid").children) button.setAttribute("aria-checked", String(parseDuration(button.textContent) === wanted));
      for (const node of document.querySelectorAll("[data-stop]")) setHidden(node, node.dataset.stop !== kinds.stop.value);
      for (const node of document.querySelectorAll("[data-exposure]")) setHidden(node, node.dataset.exposure !== kinds.exposure.value);
      const read = readPlan(formValues(), Date.now(), state.clockOffset);
      setText($("plan-preview"), read.problem ? "" : planPreview(read.plan, state.clockOffset));
      renderMessage($("plan-message"), state.messages.plan);
      return Infinity;
    }
    const live = isLive(job);
    setHidden($("run-controls"), !live);
    setHidden($("run-ended"), live);
    const plan = job.plan;
    const last = lastFrame(state, job);
    const total = plannedFrames(plan);
    const summary = job.summary || {};
    setText($("run-frame"), `${last ? last.frame : 0} of ${total || "∞"}`);
    setText($("run-lateness"), last && last.latenessMicros !== undefined ? formatLatenessPair(last.latenessMicros, summary.maxLatenessMicros) : "–");
    setText($("run-state"), live ? job.state : `${job.state}: ${job.reason || ""}`);
    const remaining = live && total && last ? ` · about ${formatDuration((total - last.frame) * plan.intervalMs)} left` : "";
    setText($("run-summary"), `Job ${job.id} on ${job.camera}: ${summary.taken || 0} taken, ${summary.failed || 0} failed, ${summary.skipped || 0} skipped · every ${formatDuration(plan.intervalMs)}${remaining}`);
    setText($("run-pause"), job.state === "paused" ? "Continue" : "Pause");
    renderMessage($("run-message"), state.messages.run);
    picture(state);
    renderRamp(state, job);
    const known = state.frames.get(job.id);
    reconcile($("run-frames"), (known ? known.frames : []).slice(-8).reverse(), frameKey, frameItem, updateFrameItem);
    if (!live) {
      setText($("run-next"), "done");
      setText($("run-clock"), formatClock(summary.lastMs || 0));
      setRing($("run-ring"), 0);
      return Infinity;
    }
    if (!job.t0) return Infinity;
    const now = Date.now() + state.clockOffset;
    const elapsed = now - Date.parse(job.t0);
    setText($("run-clock"), elapsed < 0 ? `−${formatClock(-elapsed)}` : formatClock(elapsed));
    let wait = untilNextSecond(elapsed);
    if (job.state === "paused") {
      setText($("run-next"), "paused");
      setRing($("run-ring"), 1);
      return wait;
    }
    const next = nextSlotAt(job);
    const left = isNaN(next) ? 0 : Math.max(0, next - now);
    // No slot to come (the last one under way, a stop asked for): nothing to count down to.
    setText($("run-next"), isNaN(next) ? "—" : formatClock(left + 999));
    setRing($("run-ring"), left / plan.intervalMs);
    wait = Math.min(wait, untilNextSecond(left, "down"), Math.max(100, plan.intervalMs / 10), left || plan.intervalMs);
    return wait;
  };
}

/** A ramped run: the exposure the ramp has set now (the camera's settings as its events report
 *  them) and the exposure it wanted, frame by frame, as a line. */
function renderRamp(state, job) {
  const ramped = job.plan.exposure && job.plan.exposure.kind === "ramp";
  setHidden($("run-ramp"), !ramped);
  if (!ramped) return;
  const camera = job.cameras[0];
  const now = [["iso", (v) => `ISO ${v}`], ["shutter-speed", (v) => v], ["aperture", (v) => v]]
    .map(([name, show]) => { const value = settingValue(state, camera, name); return value ? show(value) : null; }).filter(Boolean);
  const known = state.frames.get(job.id);
  const frames = (known ? known.frames : []).filter((frame) => frame.part === 1 && frame.ramp);
  const last = frames[frames.length - 1];
  setText($("run-ramp-exposure"), `Now ${now.join(" · ") || "–"}${last && last.exposure ? ` (frame ${last.frame}: ${last.exposure})` : ""}`);
  const line = polylinePoints(frames.map((frame) => frame.ramp.targetEV), 200, 60);
  const points = $("run-ramp-line");
  if (points.getAttribute("points") !== line.points) points.setAttribute("points", line.points);
  setText($("run-ramp-scale"), line.low === null ? "The graph starts with the first frame."
    : `Exposure wanted, EV at ISO 100: ${line.low.toFixed(1)} to ${line.high.toFixed(1)} over ${frames.length} frames${last ? `; ${formatStops(last.ramp.residualEV)} off target at the last` : ""}.`);
}
