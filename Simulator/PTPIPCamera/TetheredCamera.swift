import Foundation
import NIOCore
import UnleashedProtocol
import UnleashedSimulator

/// One operation as a client asked for it, with the data it sent if any.
struct OperationRequest: Sendable {
    var code: UInt16
    var transactionID: UInt32
    var parameters: [UInt32]
    var data: ByteBuffer?

    func parameter(_ index: Int) -> UInt32 { index < parameters.count ? parameters[index] : 0 }
}

/// What the camera answers to one operation.
struct OperationReply: Sendable {
    var code: UInt16
    var parameters: [UInt32] = []
    /// Data sent to the client before the response.
    var data: ByteBuffer?
    /// Set when the reply hands out an object's bytes (GetObject).
    var downloaded: StoredObject?

    static func code(_ code: UInt16) -> OperationReply { OperationReply(code: code) }
    static let ok = OperationReply(code: PTPResponse.ok)

    static func data(_ fill: (inout ByteBuffer) -> Void) -> OperationReply {
        var buffer = ByteBuffer()
        fill(&buffer)
        return OperationReply(code: PTPResponse.ok, data: buffer)
    }
}

/// A picture on the simulated card.
struct StoredObject: Sendable {
    var handle: UInt32
    var name: String
    var format: UInt16
    var bytes: [UInt8]
    var captured: Date
}

/// The state of the simulated body behind the PTP/IP connections: its properties, its card,
/// its battery. It answers the operations that need no waiting; capture timing and events are
/// the server's.
struct TetheredCamera: Sendable {
    static let storageID: UInt32 = 0x0001_0001
    /// What the card reports per picture: a nominal raw-sized file, not the tiny JPEG stored.
    static let nominalBytesPerPicture: UInt64 = 25 * 1024 * 1024

    let profile: CameraProfile
    let cardCapacity: Int
    var properties: DeviceProperties
    private(set) var objects: [StoredObject] = []
    private var nextHandle: UInt32 = 1
    /// Frames rendered so far (pictures, and clip frames); each shows its number.
    private(set) var framesTaken = 0
    /// Files written so far; names count on from it.
    private var filesWritten = 0
    private var batteryPercent = 100.0
    /// Captures triggered whose picture is not on the card yet; they hold a place on it.
    var capturesPending = 0

    init(profile: CameraProfile, cardCapacity: Int) {
        self.profile = profile
        self.cardCapacity = cardCapacity
        properties = DeviceProperties(profile: profile, batteryPercent: 100)
    }

    var freePictures: Int { max(0, cardCapacity - objects.count - capturesPending) }

    static let operationsSupported: [UInt16] = [
        PTPOperation.getDeviceInfo, PTPOperation.openSession, PTPOperation.closeSession, PTPOperation.getStorageIDs,
        PTPOperation.getStorageInfo, PTPOperation.getNumObjects, PTPOperation.getObjectHandles, PTPOperation.getObjectInfo,
        PTPOperation.getObject, PTPOperation.getThumb, PTPOperation.getPartialObject, PTPOperation.deleteObject, PTPOperation.initiateCapture,
        PTPOperation.getDevicePropDesc, PTPOperation.getDevicePropValue, PTPOperation.setDevicePropValue,
        PTPOperation.initiateOpenCapture, PTPOperation.terminateOpenCapture,
    ]

    static let eventsSupported: [UInt16] = [
        PTPEvent.objectAdded, PTPEvent.objectRemoved, PTPEvent.storeFull, PTPEvent.storageInfoChanged, PTPEvent.captureComplete,
    ]

    /// The DeviceInfo dataset. VendorExtensionID 0 and a manufacturer naming no camera maker
    /// keep libgphoto2 on its generic PTP code paths.
    func deviceInfo() -> OperationReply {
        .data { buffer in
            buffer.writeLE(UInt16(100))
            buffer.writeLE(UInt32(0))
            buffer.writeLE(UInt16(0))
            buffer.writePTPString("")
            buffer.writeLE(UInt16(0))
            buffer.writePTPArray(Self.operationsSupported)
            buffer.writePTPArray(Self.eventsSupported)
            buffer.writePTPArray(properties.codes)
            buffer.writePTPArray([PTPObjectFormat.exifJPEG])
            buffer.writePTPArray([PTPObjectFormat.exifJPEG, PTPObjectFormat.avi])
            buffer.writePTPString("Unleashed Simulator")
            buffer.writePTPString(profile.model)
            buffer.writePTPString("1.0")
            buffer.writePTPString("SIM-\(profile.id)")
        }
    }

    /// Operations that only read or change state, answered at once. Capture and the session
    /// operations are the server's.
    mutating func perform(_ request: OperationRequest) -> OperationReply {
        switch request.code {
        case PTPOperation.getDeviceInfo: return deviceInfo()
        case PTPOperation.getStorageIDs: return .data { $0.writePTPArray([Self.storageID]) }
        case PTPOperation.getStorageInfo:
            guard request.parameter(0) == Self.storageID else { return .code(PTPResponse.invalidStorageID) }
            return storageInfo()
        case PTPOperation.getNumObjects, PTPOperation.getObjectHandles:
            guard let handles = objectHandles(request) else { return .code(PTPResponse.invalidStorageID) }
            if request.code == PTPOperation.getNumObjects { return OperationReply(code: PTPResponse.ok, parameters: [UInt32(handles.count)]) }
            return .data { $0.writePTPArray(handles) }
        case PTPOperation.getObjectInfo:
            guard let object = object(request.parameter(0)) else { return .code(PTPResponse.invalidObjectHandle) }
            return .data { objectInfo(object, to: &$0) }
        case PTPOperation.getObject:
            guard let object = object(request.parameter(0)) else { return .code(PTPResponse.invalidObjectHandle) }
            var reply = OperationReply.data { $0.writeBytes(object.bytes) }
            reply.downloaded = object
            return reply
        case PTPOperation.getThumb:
            // A picture is small enough to be its own thumbnail; a clip has none.
            guard let object = object(request.parameter(0)) else { return .code(PTPResponse.invalidObjectHandle) }
            guard object.format == PTPObjectFormat.exifJPEG else { return .code(PTPResponse.noThumbnailPresent) }
            return .data { $0.writeBytes(object.bytes) }
        case PTPOperation.getPartialObject:
            guard let object = object(request.parameter(0)) else { return .code(PTPResponse.invalidObjectHandle) }
            let start = min(Int(request.parameter(1)), object.bytes.count)
            let end = start + min(Int(request.parameter(2)), object.bytes.count - start)
            var reply = OperationReply.data { $0.writeBytes(object.bytes[start..<end]) }
            reply.parameters = [UInt32(end - start)]
            if end == object.bytes.count { reply.downloaded = object }
            return reply
        case PTPOperation.deleteObject:
            return deleteObjects(request.parameter(0))
        case PTPOperation.getDevicePropDesc:
            guard let property = properties.property(UInt16(truncatingIfNeeded: request.parameter(0))) else {
                return .code(PTPResponse.devicePropNotSupported)
            }
            return .data { property.writeDescription(to: &$0) }
        case PTPOperation.getDevicePropValue:
            guard let property = properties.property(UInt16(truncatingIfNeeded: request.parameter(0))) else {
                return .code(PTPResponse.devicePropNotSupported)
            }
            return .data { property.write(property.current, to: &$0) }
        case PTPOperation.setDevicePropValue:
            guard let data = request.data else { return .code(PTPResponse.invalidDevicePropFormat) }
            switch properties.set(UInt16(truncatingIfNeeded: request.parameter(0)), from: data) {
            case .changed: return .ok
            case .refused(let code): return .code(code)
            }
        default:
            return .code(PTPResponse.operationNotSupported)
        }
    }

    private func storageInfo() -> OperationReply {
        .data { buffer in
            buffer.writeLE(UInt16(0x0004))  // removable RAM (a memory card)
            buffer.writeLE(UInt16(0x0002))  // generic hierarchical file system
            buffer.writeLE(UInt16(0x0000))  // read-write
            buffer.writeLE(UInt64(cardCapacity) * Self.nominalBytesPerPicture)
            buffer.writeLE(UInt64(freePictures) * Self.nominalBytesPerPicture)
            buffer.writeLE(UInt32(freePictures))
            buffer.writePTPString("Simulated card")
            buffer.writePTPString("UNLEASHED")
        }
    }

    /// The handles GetObjectHandles lists: all pictures sit in the root, so "in the root"
    /// (0xFFFFFFFF) and "anywhere" (0) are the same; no picture is an association.
    private func objectHandles(_ request: OperationRequest) -> [UInt32]? {
        let storage = request.parameter(0)
        guard storage == 0xFFFF_FFFF || storage == Self.storageID else { return nil }
        let format = request.parameter(1)
        let parent = request.parameter(2)
        guard parent == 0 || parent == 0xFFFF_FFFF else { return [] }
        return objects.filter { format == 0 || format == UInt32($0.format) }.map(\.handle)
    }

    func object(_ handle: UInt32) -> StoredObject? { objects.first { $0.handle == handle } }

    private func objectInfo(_ object: StoredObject, to buffer: inout ByteBuffer) {
        buffer.writeLE(Self.storageID)
        buffer.writeLE(object.format)
        buffer.writeLE(UInt16(0))  // no protection
        buffer.writeLE(UInt32(object.bytes.count))
        if object.format == PTPObjectFormat.exifJPEG {
            buffer.writeLE(PTPObjectFormat.exifJPEG)  // the picture is its own thumbnail
            buffer.writeLE(UInt32(object.bytes.count))
            buffer.writeLE(UInt32(FrameRenderer.width))
            buffer.writeLE(UInt32(FrameRenderer.height))
        } else {
            buffer.writeLE(PTPObjectFormat.undefined)  // no thumbnail
            for _ in 0..<3 { buffer.writeLE(UInt32(0)) }  // thumbnail size, width, height
        }
        buffer.writeLE(UInt32(FrameRenderer.width))
        buffer.writeLE(UInt32(FrameRenderer.height))
        buffer.writeLE(UInt32(24))
        buffer.writeLE(UInt32(0))  // parent: the root
        buffer.writeLE(UInt16(0))  // not an association
        buffer.writeLE(UInt32(0))
        buffer.writeLE(UInt32(0))  // sequence number
        buffer.writePTPString(object.name)
        buffer.writePTPString(DeviceProperties.ptpDateTime(object.captured))
        buffer.writePTPString(DeviceProperties.ptpDateTime(object.captured))
        buffer.writePTPString("")
    }

    private mutating func deleteObjects(_ handle: UInt32) -> OperationReply {
        if handle == 0xFFFF_FFFF {
            objects.removeAll()
            return .ok
        }
        guard let index = objects.firstIndex(where: { $0.handle == handle }) else { return .code(PTPResponse.invalidObjectHandle) }
        objects.remove(at: index)
        return .ok
    }

    /// Takes the picture a finished capture stores, `exposureStops` from a correct exposure, and
    /// drains the battery for it.
    mutating func storePicture(at date: Date, exposureStops: Double) -> StoredObject {
        framesTaken += 1
        let bytes = FrameRenderer.jpeg(frameNumber: framesTaken, exposureStops: exposureStops) ?? []
        drainBattery(by: profile.batteryDrain.perShot)
        return store(prefix: "IMG", suffix: "JPG", format: PTPObjectFormat.exifJPEG, bytes: bytes, at: date)
    }

    /// Stores a clip recorded for `length`, `exposureStops` from a correct exposure: a Motion
    /// JPEG AVI at one frame per second of recording, at most ten, so that clips stay small.
    mutating func storeClip(length: Duration, at date: Date, exposureStops: Double) -> StoredObject {
        let seconds = Double(length.components.seconds) + Double(length.components.attoseconds) / 1e18
        var frames: [[UInt8]] = []
        for _ in 0..<min(10, max(1, Int(seconds.rounded(.up)))) {
            framesTaken += 1
            frames.append(FrameRenderer.jpeg(frameNumber: framesTaken, exposureStops: exposureStops) ?? [])
        }
        let bytes = MotionJPEGClip.avi(frames: frames, width: FrameRenderer.width, height: FrameRenderer.height, framesPerSecond: 1)
        drainBattery(by: profile.batteryDrain.perVideoMinute * seconds / 60)
        return store(prefix: "MOV", suffix: "AVI", format: PTPObjectFormat.avi, bytes: bytes, at: date)
    }

    private mutating func store(prefix: String, suffix: String, format: UInt16, bytes: [UInt8], at date: Date) -> StoredObject {
        filesWritten += 1
        let name = "\(prefix)_\(String(format: "%04d", (filesWritten - 1) % 9999 + 1)).\(suffix)"
        let object = StoredObject(handle: nextHandle, name: name, format: format, bytes: bytes, captured: date)
        nextHandle += 1
        objects.append(object)
        return object
    }

    private mutating func drainBattery(by percent: Double) {
        batteryPercent = max(0, batteryPercent - percent)
        properties.setBatteryPercent(Int(batteryPercent.rounded(.up)))
    }
}
