// The RunPod JS SDK against the emulator: runSync falling back to /status-sync, and
// statusSync itself. Run by tests/emulator/workers/test_js_sdk.py, which deploys the
// worker and reads the JSON line this prints last.
//
// Usage: node status_sync.mjs BASE_URL API_KEY ENDPOINT_ID DIR
// Jobs wait for a file in DIR: the first one for a file created when the SDK first calls
// /status-sync, so /runsync answers before the job ends whatever the machine's speed, and
// the SDK must fall back, as it does when a job outlasts /runsync on the service.
import fs from "node:fs"
import runpodSdk from "runpod-sdk"

const [base, key, endpointId, dir] = process.argv.slice(2)
const calls = []
const realFetch = globalThis.fetch
let released = false
globalThis.fetch = async (url, init) => {
  const path = String(url).slice(base.length)
  calls.push(`${init?.method ?? "GET"} ${path}`)
  if (path.includes("/status-sync/") && !released) {
    released = true
    fs.writeFileSync(`${dir}/first`, "")
  }
  return realFetch(url, init)
}

const endpoint = runpodSdk(key, { baseUrl: `${base}/v2` }).endpoint(endpointId)
const ran = await endpoint.runSync({ input: { mode: "progress", release: `${dir}/first` } }, 4000)

const { id } = await endpoint.run({ input: { mode: "progress", release: `${dir}/second` } })
// It waits for its file: each call answers after a second, with the job's state; until
// the worker has taken it and posted its progress, the job may still be queued.
let pending
for (let tries = 0; tries < 60; tries++) {
  pending = await endpoint.statusSync(id, 1000)
  if (pending.output !== undefined) break
}
fs.writeFileSync(`${dir}/second`, "")
const done = await endpoint.statusSync(id, 60000)

console.log(JSON.stringify({ ran, pending, done, calls }))
