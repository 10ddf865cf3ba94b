// Jobs: every job the daemon holds with its counts as they grow, a job's frames from the journal,
// and the pictures the camera's backend saved.
import { $, confirmTwice, el, reconcile, renderMessage, setHidden, setText } from "./dom.js";
import { formatDuration } from "./format.js";
import { can, frameKey, isLive, kindOf } from "./model.js";
import { camerasPath } from "./api.js";
import { frameItem, updateFrameItem } from "./view-timelapse.js";

/** A job's line of counts, as it grows. */
export function jobCounts(job, clockOffset) {
  const s = job.summary || {};
  const kind = kindOf(job);
  const what = kind === "video" ? "clips" : kind === "photo-bulb" ? "bulb exposure" : "frames";
  const from = job.t0 ? ` · from ${new Date(Date.parse(job.t0) - clockOffset).toLocaleString()}` : "";
  return `${what}: ${s.taken || 0} taken, ${s.failed || 0} failed, ${s.skipped || 0} skipped · every ${formatDuration(job.plan.intervalMs)}${from}`;
}

const EMPTY = "Pictures appear here when the camera's backend downloads them (a USB camera through libgphoto2 with downloads on).";

export function mountJobs({ store, actions }) {
  const createJob = (job) => {
    const stop = el("button", { type: "button", className: "danger", text: "Stop", "data-needs": "operate" });
    confirmTwice(stop, "Tap again to stop", () => actions.runCommand(store.state.jobs.get(Number(stop.dataset.job)), "stop", { when: "now" }, `job:${stop.dataset.job}`));
    const frames = el("button", { type: "button", text: "Frames" });
    frames.addEventListener("click", () => actions.openJobDetail(Number(frames.dataset.job)));
    // The journal's frames as a file (the same columns as `unleashed runs export --csv`).
    const csv = el("a", { className: "button", href: `/v1/jobs/${job.id}/frames.csv`, download: `unleashed-run-${job.id}.csv`, text: "CSV" });
    const resume = el("button", { type: "button", className: "primary", text: "Resume", "data-needs": "operate" });
    resume.addEventListener("click", () => actions.resumeJob(Number(resume.dataset.job)));
    return el("li", {},
      el("div", { className: "title" }, el("span", { text: `Job ${job.id} · ${job.camera}` }), el("span", { className: "muted" })),
      el("div", { className: "muted small counts" }), el("div", { className: "small reason" }),
      el("div", { className: "run-controls" }, frames, csv, resume, stop), el("p", { className: "message", role: "alert" }));
  };
  const updateJob = (node, job, state) => {
    const [title, counts, reason, controls, message] = node.children;
    const [frames, , resume, stop] = controls.children;
    setText(title.children[1], job.state);
    setText(counts, jobCounts(job, state.clockOffset));
    // An interrupted run the daemon has not taken up by itself: Resume, or why it cannot be.
    const why = job.state === "suspended" && !job.resumable && job.resumeRefusal ? ` Cannot resume: ${job.resumeRefusal}` : "";
    setText(reason, `${job.reason || ""}${why}`);
    setHidden(reason, !job.reason && !why);
    frames.dataset.job = String(job.id);
    stop.dataset.job = String(job.id);
    resume.dataset.job = String(job.id);
    setHidden(stop, !(isLive(job) && can(state, "operate")));
    setHidden(resume, !(job.state === "suspended" && job.resumable));
    renderMessage(message, state.messages[`job:${job.id}`]);
  };

  return function render(state) {
    if (state.view !== "jobs") return Infinity;
    const jobs = [...state.jobs.values()].sort((a, b) => b.id - a.id);
    if (!jobs.length) $("job-list").replaceChildren(el("li", { className: "muted", text: "No job has run yet." }));
    else reconcile($("job-list"), jobs, (job) => job.id, createJob, (node, job) => updateJob(node, job, state));

    const detail = state.detail;
    setHidden($("job-detail"), !detail);
    if (detail) {
      setText($("job-detail-title"), `Job ${detail.job}`);
      setText($("job-detail-summary"), detail.summary);
      reconcile($("job-detail-frames"), detail.frames.slice(-100).reverse(), frameKey, frameItem, updateFrameItem);
    }

    const pictures = state.pictures;
    const camera = pictures.camera;
    reconcile($("thumbs"), pictures.list, (picture) => `${camera}/${picture.name}`, (picture) => {
      const label = `${camera}: ${picture.name}${picture.frame ? `, frame ${picture.frame}` : ""}`;
      return el("li", { "data-name": picture.name },
        el("img", { src: camerasPath(camera, `/pictures/${encodeURIComponent(picture.name)}/thumbnail`), alt: label, loading: "lazy", width: "160", height: "107" }),
        el("span", { className: "small muted", text: picture.name }));
    }, () => {});
    setHidden($("thumbs-empty"), pictures.list.length > 0);
    setText($("thumbs-empty"), pictures.problem || EMPTY);
    return Infinity;
  };
}
