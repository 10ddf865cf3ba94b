public import Foundation
public import Intervalometer
public import UnleashedProtocol

extension RunPlan {
    /// The plan as the API writes it in a job, and as `POST /v1/jobs` takes it, so that a
    /// client submits exactly what it would run itself.
    public var apiJSON: JSONValue { json }

    /// Reads a plan in the API's shape (a job's `plan`); the error names the field.
    public init(apiJSON: JSONValue, now: Date = Date()) throws(PlanDocumentError) {
        do throws(JobRequestError) {
            try self.init(json: apiJSON, at: "plan", now: now)
        } catch {
            throw PlanDocumentError(description: error.description)
        }
    }
}

/// Why a plan document could not be read.
public struct PlanDocumentError: Error, Sendable, CustomStringConvertible {
    public var description: String
}
