public import Foundation
public import JSON

// MARK: - Paired browsers (the web app)

/// ``API/makePairingCode``'s body: the role the browser that types the code will get.
public struct PairingCodeRequest: CodableDocument, Equatable {
    /// `operator` or `viewer`.
    public var role: String

    public init(role: String) { self.role = role }
}

/// A code that pairs one browser with the web app, with the role it gives and when it expires.
public struct PairingCodeDocument: APIDocument, Equatable {
    /// Six digits.
    public var code: String
    public var role: String
    public var expires: Date
    /// The web app's address with the code in it, for a QR code; nil when the daemon serves no web app.
    public var url: String?

    public init(code: String, role: String, expires: Date, url: String?) {
        self.code = code
        self.role = role
        self.expires = expires
        self.url = url
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .string(code), "role": .string(role),
                                            "expires": .string(expires.formatted(.iso8601))]
        members["url"] = url.map(JSONValue.string) ?? .null
        return .object(members)
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "code")
    }

    private enum CodingKeys: String, CodingKey {
        case code, role, expires, url
    }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        self.init(code: try members.decode(String.self, forKey: .code), role: try members.decode(String.self, forKey: .role),
                  expires: try members.decode(Timestamp.self, forKey: .expires).date, url: try members.decodeIfPresent(String.self, forKey: .url))
    }
}

/// ``API/webClients``: the browsers paired with the web app. Their secrets are never listed.
public struct WebClientList: APIDocument, Equatable {
    public struct Client: Decodable, Equatable, Sendable {
        /// What `unleashed web revoke` takes.
        public var id: String
        public var name: String
        public var role: String
        public var paired: Date

        public init(id: String, name: String, role: String, paired: Date) {
            self.id = id
            self.name = name
            self.role = role
            self.paired = paired
        }

        private enum CodingKeys: String, CodingKey {
            case id, name, role, paired
        }

        public init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            self.init(id: try members.decode(String.self, forKey: .id), name: try members.decode(String.self, forKey: .name),
                      role: try members.decode(String.self, forKey: .role), paired: try members.decode(Timestamp.self, forKey: .paired).date)
        }
    }

    public var clients: [Client]

    public init(clients: [Client]) { self.clients = clients }

    public var json: JSONValue {
        ["clients": .array(clients.map { client in
            ["id": .string(client.id), "name": .string(client.name), "role": .string(client.role),
             "paired": .string(client.paired.formatted(.iso8601))]
        })]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "body")
    }
}

// MARK: - Saved pictures

/// ``API/pictures``: the pictures a camera's backend saved on the daemon's disk, newest first.
public struct PictureList: APIDocument, Equatable {
    public struct Picture: Decodable, Equatable, Sendable {
        /// The file's name in the downloads folder, which ``API/thumbnail`` takes.
        public var name: String
        public var bytes: Int
        /// The file's folder and name on the camera.
        public var cameraPath: String
        /// The run's frame it belongs to, when a run took it.
        public var frame: Int?
        public var shotCounter: Int
        public var saved: Date

        public init(name: String, bytes: Int, cameraPath: String, frame: Int?, shotCounter: Int, saved: Date) {
            self.name = name
            self.bytes = bytes
            self.cameraPath = cameraPath
            self.frame = frame
            self.shotCounter = shotCounter
            self.saved = saved
        }

        private enum CodingKeys: String, CodingKey {
            case name, bytes, cameraPath, frame, shotCounter, saved
        }

        public init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            self.init(name: try members.decode(String.self, forKey: .name), bytes: try members.decode(Int.self, forKey: .bytes),
                      cameraPath: try members.decode(String.self, forKey: .cameraPath), frame: try members.decodeIfPresent(Int.self, forKey: .frame),
                      shotCounter: try members.decode(Int.self, forKey: .shotCounter), saved: try members.decode(Timestamp.self, forKey: .saved).date)
        }
    }

    public var pictures: [Picture]

    public init(pictures: [Picture]) { self.pictures = pictures }

    public var json: JSONValue {
        ["pictures": .array(pictures.map { picture in
            [
                "name": .string(picture.name), "bytes": .integer(Int64(picture.bytes)), "cameraPath": .string(picture.cameraPath),
                "frame": picture.frame.map { .integer(Int64($0)) } ?? .null, "shotCounter": .integer(Int64(picture.shotCounter)),
                "saved": .string(picture.saved.formatted(.iso8601)),
            ]
        })]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "body")
    }
}
