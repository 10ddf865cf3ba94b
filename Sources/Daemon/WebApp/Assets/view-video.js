// Video: record and stop by hand (the clock counts from the press), or clips every N as a job.
import { $, confirmTwice, renderMessage, setAttribute, setHidden, setText } from "./dom.js";
import { formatClock, formatDuration } from "./format.js";
import { runOnTarget } from "./model.js";
import { setRing, untilNextSecond } from "./clock.js";

export function mountVideo({ store, actions }) {
  $("record").addEventListener("click", () => actions.record());
  $("clips-form").addEventListener("submit", (event) => {
    event.preventDefault();
    actions.startClips($("clip-length").value, $("clip-interval").value, $("clip-count").value);
  });
  confirmTwice($("clips-stop"), "Tap again to stop", () => {
    const job = runOnTarget(store.state, "video");
    if (job) actions.runCommand(job, "stop", { when: "now" }, "video");
  });

  return function render(state) {
    if (state.view !== "video") return Infinity;
    const recording = state.target ? state.recordings[state.target] : null;
    setText($("record-label"), recording ? "Stop" : "Record");
    setAttribute($("record"), "aria-label", recording ? "Stop recording" : "Start recording");
    $("record").classList.toggle("recording", !!recording);
    renderMessage($("video-message"), state.messages.video);
    renderMessage($("clips-message"), state.messages.clips);
    const job = runOnTarget(state, "video");
    setHidden($("clips-form"), !!job);
    setHidden($("clips-running"), !job);
    if (job) {
      const s = job.summary || {};
      setText($("clips-summary"), `Clips job ${job.id}: ${s.taken || 0} of ${job.plan.frames || "∞"} clips of ${formatDuration(job.plan.exposure.clipMs)}, every ${formatDuration(job.plan.intervalMs)} (${job.state}).`);
    }
    if (!recording) {
      setText($("record-clock"), "0:00");
      setRing($("record-ring"), 1);
      return Infinity;
    }
    const length = Date.now() - recording;
    setText($("record-clock"), formatClock(length));
    setRing($("record-ring"), 1 - ((length % 60000) / 60000));
    return untilNextSecond(length);
  };
}
