/// PTP (ISO 15740) operation codes the simulated camera knows by name.
public enum PTPOperation {
    public static let getDeviceInfo: UInt16 = 0x1001
    public static let openSession: UInt16 = 0x1002
    public static let closeSession: UInt16 = 0x1003
    public static let getStorageIDs: UInt16 = 0x1004
    public static let getStorageInfo: UInt16 = 0x1005
    public static let getNumObjects: UInt16 = 0x1006
    public static let getObjectHandles: UInt16 = 0x1007
    public static let getObjectInfo: UInt16 = 0x1008
    public static let getObject: UInt16 = 0x1009
    public static let getThumb: UInt16 = 0x100A
    public static let deleteObject: UInt16 = 0x100B
    public static let initiateCapture: UInt16 = 0x100E
    public static let getDevicePropDesc: UInt16 = 0x1014
    public static let getDevicePropValue: UInt16 = 0x1015
    public static let setDevicePropValue: UInt16 = 0x1016
    public static let terminateOpenCapture: UInt16 = 0x1018
    public static let getPartialObject: UInt16 = 0x101B
    public static let initiateOpenCapture: UInt16 = 0x101C
}

/// PTP response codes the simulated camera answers with.
public enum PTPResponse {
    public static let ok: UInt16 = 0x2001
    public static let generalError: UInt16 = 0x2002
    public static let sessionNotOpen: UInt16 = 0x2003
    public static let invalidTransactionID: UInt16 = 0x2004
    public static let operationNotSupported: UInt16 = 0x2005
    public static let parameterNotSupported: UInt16 = 0x2006
    public static let invalidStorageID: UInt16 = 0x2008
    public static let invalidObjectHandle: UInt16 = 0x2009
    public static let devicePropNotSupported: UInt16 = 0x200A
    public static let storeFull: UInt16 = 0x200C
    public static let accessDenied: UInt16 = 0x200F
    public static let noThumbnailPresent: UInt16 = 0x2010
    public static let deviceBusy: UInt16 = 0x2019
    public static let invalidDevicePropFormat: UInt16 = 0x201B
    public static let invalidDevicePropValue: UInt16 = 0x201C
    public static let invalidParameter: UInt16 = 0x201D
    public static let sessionAlreadyOpen: UInt16 = 0x201E
}

/// PTP event codes the simulated camera raises on the event connection.
public enum PTPEvent {
    public static let objectAdded: UInt16 = 0x4002
    public static let objectRemoved: UInt16 = 0x4003
    public static let devicePropChanged: UInt16 = 0x4006
    public static let storeFull: UInt16 = 0x400A
    public static let storageInfoChanged: UInt16 = 0x400C
    public static let captureComplete: UInt16 = 0x400D
}

/// PTP device property codes the simulated camera offers.
public enum PTPProperty {
    public static let batteryLevel: UInt16 = 0x5001
    public static let whiteBalance: UInt16 = 0x5005
    public static let fNumber: UInt16 = 0x5007
    public static let exposureTime: UInt16 = 0x500D
    public static let exposureIndex: UInt16 = 0x500F
    public static let exposureBiasCompensation: UInt16 = 0x5010
    public static let dateTime: UInt16 = 0x5011
}

/// PTP object format codes the simulated camera stores.
enum PTPObjectFormat {
    static let undefined: UInt16 = 0x3000
    static let avi: UInt16 = 0x300A
    static let exifJPEG: UInt16 = 0x3801
}

/// The PTP/IP packet types of CIPA DC-005.
public enum PTPIPPacketType: UInt32, Sendable {
    case initCommandRequest = 1
    case initCommandAck = 2
    case initEventRequest = 3
    case initEventAck = 4
    case initFail = 5
    case operationRequest = 6
    case operationResponse = 7
    case event = 8
    case startData = 9
    case data = 10
    case cancel = 11
    case endData = 12
    case probeRequest = 13
    case probeResponse = 14
}
