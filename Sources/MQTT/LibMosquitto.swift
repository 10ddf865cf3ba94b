import CMosquitto
import Glibc

/// libmosquitto's functions, looked up in the library opened at run time.
///
/// Why not linked: libmosquitto brings libssl and libcrypto, and loading those added 2.4 to
/// 3 ms to every start of `unleashed` (`perf stat -r 40 unleashed --version` with and without
/// the library preloaded), a command that never speaks MQTT. Only a daemon with `[mqtt]` in its
/// configuration opens it.
struct LibMosquitto: @unchecked Sendable {
    typealias Handle = OpaquePointer
    typealias ConnectCallback = @convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void
    typealias MessageCallback = @convention(c) (Handle?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) -> Void

    let libInit: @convention(c) () -> Int32
    let new: @convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?
    let destroy: @convention(c) (Handle?) -> Void
    let intOption: @convention(c) (Handle?, UInt32, Int32) -> Int32
    let willSet: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let usernamePasswordSet: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let tlsSet: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                UnsafePointer<CChar>?, UnsafeRawPointer?) -> Int32
    let reconnectDelaySet: @convention(c) (Handle?, UInt32, UInt32, Bool) -> Int32
    let connectAsync: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
    let disconnect: @convention(c) (Handle?) -> Int32
    let publish: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let subscribe: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32
    let loopStart: @convention(c) (Handle?) -> Int32
    let loopStop: @convention(c) (Handle?, Bool) -> Int32
    let connectCallbackSet: @convention(c) (Handle?, ConnectCallback?) -> Void
    let disconnectCallbackSet: @convention(c) (Handle?, ConnectCallback?) -> Void
    let messageCallbackSet: @convention(c) (Handle?, MessageCallback?) -> Void
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let connackString: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let publishTopicCheck: @convention(c) (UnsafePointer<CChar>?) -> Int32
    let subscribeTopicCheck: @convention(c) (UnsafePointer<CChar>?) -> Int32

    /// The library, opened and initialised once; nil with the reason when it cannot be.
    static let shared: Result<LibMosquitto, MQTTError> = open("libmosquitto.so.1")

    private static func open(_ name: String) -> Result<LibMosquitto, MQTTError> {
        guard let library = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? name
            return .failure(.library("libmosquitto cannot be loaded (\(reason)); install libmosquitto1"))
        }
        do {
            func symbol<T>(_ name: String) throws(MQTTError) -> T {
                guard let address = dlsym(library, name) else { throw .library("libmosquitto has no \(name): too old a version") }
                return unsafeBitCast(address, to: T.self)
            }
            let functions = LibMosquitto(
                libInit: try symbol("mosquitto_lib_init"), new: try symbol("mosquitto_new"),
                destroy: try symbol("mosquitto_destroy"), intOption: try symbol("mosquitto_int_option"),
                willSet: try symbol("mosquitto_will_set"), usernamePasswordSet: try symbol("mosquitto_username_pw_set"),
                tlsSet: try symbol("mosquitto_tls_set"), reconnectDelaySet: try symbol("mosquitto_reconnect_delay_set"),
                connectAsync: try symbol("mosquitto_connect_async"), disconnect: try symbol("mosquitto_disconnect"),
                publish: try symbol("mosquitto_publish"), subscribe: try symbol("mosquitto_subscribe"),
                loopStart: try symbol("mosquitto_loop_start"), loopStop: try symbol("mosquitto_loop_stop"),
                connectCallbackSet: try symbol("mosquitto_connect_callback_set"),
                disconnectCallbackSet: try symbol("mosquitto_disconnect_callback_set"),
                messageCallbackSet: try symbol("mosquitto_message_callback_set"),
                strerror: try symbol("mosquitto_strerror"), connackString: try symbol("mosquitto_connack_string"),
                publishTopicCheck: try symbol("mosquitto_pub_topic_check"),
                subscribeTopicCheck: try symbol("mosquitto_sub_topic_check"))
            let status = functions.libInit()
            guard status == MOSQ_ERR_SUCCESS.rawValue else { return .failure(.library("libmosquitto did not start: \(functions.describe(status))")) }
            return .success(functions)
        } catch {
            return .failure(error)
        }
    }

    /// An error code in libmosquitto's words.
    func describe(_ status: Int32) -> String {
        strerror(status).map { String(cString: $0) } ?? "error \(status)"
    }
}
