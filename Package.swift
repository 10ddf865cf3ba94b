// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "unleashed",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "unleashed", targets: ["unleashed"]),
        .library(name: "CommandCore", targets: ["CommandCore"]),
        .library(name: "JSON", targets: ["JSON"]),
        .library(name: "CameraKit", targets: ["CameraKit"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "CameraProtocols", targets: ["CameraProtocols"]),
        .library(name: "CameraRemote", targets: ["CameraRemote"]),
        .library(name: "UnleashedProtocol", targets: ["UnleashedProtocol"]),
        .library(name: "UnleashedKit", targets: ["UnleashedKit"]),
        .library(name: "UnleashedSimulator", targets: ["UnleashedSimulator"]),
        .library(name: "Intervalometer", targets: ["Intervalometer"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "GPhoto2", targets: ["GPhoto2"]),
        .library(name: "UnleashedAPI", targets: ["UnleashedAPI"]),
        .library(name: "Daemon", targets: ["Daemon"]),
        .library(name: "DaemonClient", targets: ["DaemonClient"]),
        .library(name: "UnleashedApp", targets: ["UnleashedApp"]),
        .executable(name: "unleashed-sim", targets: ["unleashed-sim"]),
        // For the benchmarks' package (Benchmarks/Package.swift), which the test build does not compile.
        .library(name: "SimulatedCameras", targets: ["SimulatedCameras"]),
        .library(name: "FakeBlueZ", targets: ["FakeBlueZ"]),
        .library(name: "PTPIPCamera", targets: ["PTPIPCamera"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "UnleashedTestSupport", targets: ["UnleashedTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/pointfreeco/swift-clocks.git", from: "1.0.6"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        // Already in the graph through Hummingbird's TLS; `unleashed doctor` reads the web
        // certificate's validity with it.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .target(name: "JSON", swiftSettings: strict),
        .target(name: "CameraKit", swiftSettings: strict),
        // Bluetooth GATT's identifiers and errors, for the links and every protocol over them.
        .target(name: "GATT", swiftSettings: strict),
        .target(name: "CameraProtocols", dependencies: ["CameraKit", "GATT"], swiftSettings: strict),
        .target(name: "CameraRemote", dependencies: ["CameraKit", "CameraProtocols", "GATT", "UnleashedKit"], swiftSettings: strict),
        .target(
            name: "SimulatedCameras",
            dependencies: ["CameraKit", "CameraProtocols", "CameraRemote", "GATT", "UnleashedKit"],
            path: "Simulator/SimulatedCameras",
            swiftSettings: strict
        ),
        .target(
            name: "UnleashedProtocol",
            dependencies: ["JSON", "CameraKit"],
            swiftSettings: strict,
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]
        ),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: strict),
        .target(name: "BlueZ", dependencies: ["CameraProtocols", "DBus", "GATT", "UnleashedKit", "UnleashedProtocol"], swiftSettings: strict),
        .systemLibrary(name: "CLinux"),
        // Types only: MQTT opens libmosquitto at run time (LibMosquitto.swift says why).
        .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(name: "MQTT", dependencies: ["CMosquitto"], swiftSettings: strict),
        .target(name: "UnleashedKit", dependencies: ["CameraKit", "CLinux", "GATT", "UnleashedProtocol"], swiftSettings: strict),
        .systemLibrary(name: "CGPhoto2", pkgConfig: "libgphoto2", providers: [.apt(["libgphoto2-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .target(name: "GPhoto2", dependencies: ["CameraKit", "CGPhoto2", "CTurboJPEG", "JSON", "UnleashedKit"], swiftSettings: strict),
        .target(
            name: "Intervalometer",
            dependencies: ["JSON", "CameraKit", "UnleashedKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        .target(
            name: "UnleashedAPI",
            dependencies: ["JSON", "CameraKit", "UnleashedKit", "UnleashedProtocol", "Intervalometer"],
            swiftSettings: strict
        ),
        .target(
            name: "Daemon",
            dependencies: [
                "JSON",
                "CameraKit", "CameraProtocols", "UnleashedKit", "UnleashedAPI",
                "UnleashedProtocol",
                "Intervalometer",
                "MQTT",
                "CQREncode",
                "CTurboJPEG",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                // The request parts a channel handler of the web listener reads (ListenerLimits).
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // Tells Node that the page's files are ES modules, for the page's unit tests.
            exclude: ["WebApp/package.json"],
            // The web app's page, embedded in the binary: it works with no internet and no files beside it.
            resources: [.embedInCode("WebApp/Assets")],
            swiftSettings: strict
        ),
        .target(
            name: "DaemonClient",
            dependencies: [
                "JSON",
                "CameraKit", "UnleashedKit", "UnleashedAPI", "Intervalometer", "MQTT",
                "UnleashedProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "UnleashedSimulator",
            dependencies: ["CameraKit", "GATT", "UnleashedProtocol", "UnleashedKit"],
            path: "Simulator/UnleashedSimulator",
            swiftSettings: strict
        ),
        .target(
            name: "FakeBlueZ",
            dependencies: ["CameraProtocols", "DBus", "GATT", "SimulatedCameras", "UnleashedSimulator", "UnleashedKit", "UnleashedProtocol"],
            path: "Simulator/FakeBlueZ",
            swiftSettings: strict
        ),
        .target(
            name: "PTPIPCamera",
            dependencies: [
                "CameraKit", "UnleashedSimulator", "UnleashedProtocol", "UnleashedKit", "CTurboJPEG",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Simulator/PTPIPCamera",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-sim",
            dependencies: ["UnleashedKit", "UnleashedSimulator", "CameraKit", "ProcessSignals", "FakeBlueZ", "PTPIPCamera", "DBus", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Simulator/unleashed-sim",
            swiftSettings: strict
        ),
        .target(
            name: "UnleashedApp",
            dependencies: ["MQTT", "DBus", "Doctor",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "JSON",
                "CameraKit",
                "CommandCore",
                "ProcessSignals",
                "CameraProtocols",
                "CameraRemote",
                "SimulatedCameras",
                "UnleashedAPI",
                "BlueZ",
                "GPhoto2",
                "UnleashedKit",
                "UnleashedProtocol",
                "UnleashedSimulator",
                "Intervalometer",
                "Daemon",
                "DaemonClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Only the C library and Dispatch: the simulator links it without the HTTP client.
        .target(name: "ProcessSignals", swiftSettings: strict),
        // `unleashed doctor`'s rules: what each check's observation means and what to do. Pure.
        .target(name: "Doctor", dependencies: ["JSON"], swiftSettings: strict),
        .target(
            name: "CommandCore",
            dependencies: ["JSON", "CameraKit", "DaemonClient", "ProcessSignals", "UnleashedKit", "UnleashedProtocol"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed",
            dependencies: [
                "JSON",
                "CameraKit",
                "CommandCore",
                "Doctor",
                "ProcessSignals",
                "UnleashedApp",
                "UnleashedKit",
                "UnleashedSimulator",
                "Intervalometer",
                "DaemonClient",
                "UnleashedAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux]))]
        ),
        .target(
            name: "UnleashedTestSupport",
            dependencies: ["JSON", "UnleashedProtocol", 
                "CameraKit", "Intervalometer",
                "DBus", "FakeBlueZ",
                "UnleashedKit",
                "UnleashedSimulator",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            path: "Tests/Support",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-child-probe",
            dependencies: ["UnleashedTestSupport"],
            path: "Tests/ChildProbe",
            swiftSettings: strict
        ),
        .testTarget(
            name: "TestSupportTests",
            dependencies: ["UnleashedTestSupport", "unleashed-child-probe", "unleashed-sim"],
            swiftSettings: strict
        ),
        .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: strict),
        .testTarget(name: "CameraKitTests", dependencies: ["CameraKit"], swiftSettings: strict),
        .testTarget(
            name: "CameraIntegrationTests",
            dependencies: ["UnleashedProtocol", "BlueZ", "CameraKit", "CameraProtocols", "CameraRemote", "DBus", "FakeBlueZ", "GATT", "Intervalometer",
                           "SimulatedCameras", "UnleashedApp", "UnleashedKit", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "CameraProtocolsTests", dependencies: ["CameraKit", "CameraProtocols", "GATT", "UnleashedTestSupport"], swiftSettings: strict),
        // The fuzz targets, built here without sanitizers so that FuzzCorpusTests replays the
        // committed corpus (Tests/Fuzz/corpus) in the ordinary test build; scripts/fuzz builds
        // the same files with libFuzzer.
        .target(name: "FuzzTargets", dependencies: ["CameraKit", "CameraProtocols", "GATT", "UnleashedProtocol"],
                path: "Tests/Fuzz/Targets", swiftSettings: strict),
        .testTarget(name: "FuzzCorpusTests", dependencies: ["FuzzTargets"], swiftSettings: strict),
        .testTarget(
            name: "CameraRemoteTests",
            dependencies: ["CameraKit", "CameraProtocols", "CameraRemote", "GATT", "SimulatedCameras", "UnleashedKit", "Intervalometer", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnleashedProtocolTests",
            dependencies: [
                "JSON",
                "CameraKit", "UnleashedProtocol",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnleashedKitTests",
            dependencies: ["UnleashedProtocol", 
                "CameraKit", "GATT", "UnleashedKit",
                "UnleashedSimulator",
                "UnleashedTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RigTests",
            dependencies: ["CameraKit", "BlueZ", "DBus", "FakeBlueZ", "Intervalometer", "UnleashedKit", "UnleashedProtocol",
                           "UnleashedSimulator", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnleashedSimulatorTests",
            dependencies: ["UnleashedProtocol", 
                "CameraKit", "UnleashedSimulator",
                "UnleashedKit",
                "UnleashedTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntervalometerTests",
            dependencies: ["UnleashedProtocol", 
                "CameraKit", "Intervalometer",
                "UnleashedTestSupport",
                "UnleashedKit",
                "UnleashedSimulator",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnleashedAPITests",
            dependencies: ["JSON", "CameraKit", "UnleashedAPI", "UnleashedKit", "UnleashedProtocol", "UnleashedSimulator", "Intervalometer", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "JSON",
                "CameraKit", "CameraProtocols", "Daemon", "DaemonClient", "UnleashedKit", "UnleashedProtocol", "UnleashedSimulator", "Intervalometer",
                "UnleashedAPI", "UnleashedTestSupport", "MQTT",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FakeBlueZTests",
            dependencies: ["CameraProtocols", "FakeBlueZ", "DBus", "GATT", "SimulatedCameras", "UnleashedSimulator", "UnleashedProtocol",
                           "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "BlueZTests",
            dependencies: ["UnleashedProtocol", "BlueZ", "FakeBlueZ", "DBus", "GATT", "UnleashedKit", "UnleashedSimulator", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PTPIPCameraTests",
            dependencies: [
                "PTPIPCamera", "UnleashedSimulator", "UnleashedProtocol", "UnleashedTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GPhoto2Tests",
            dependencies: ["CGPhoto2", 
                "CameraKit", "GPhoto2", "PTPIPCamera", "Intervalometer", "UnleashedKit", "UnleashedProtocol", "UnleashedSimulator", "UnleashedTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MQTTTests",
            dependencies: ["MQTT", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "DoctorTests", dependencies: ["Doctor"], swiftSettings: strict),
        .testTarget(name: "ProcessSignalsTests", dependencies: ["ProcessSignals"], swiftSettings: strict),
        .testTarget(
            name: "CommandCoreTests",
            dependencies: ["CommandCore", "CameraKit", "UnleashedAPI", "UnleashedProtocol"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["unleashed", "unleashed-sim", "CommandCore", "DaemonClient", "DBus", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnleashedAppTests",
            dependencies: ["BlueZ", "CameraKit", "DBus", "DaemonClient", "Doctor", "GPhoto2", "MQTT", "UnleashedAPI", "UnleashedProtocol",
                "UnleashedApp", "CommandCore", "Daemon", "CameraProtocols", "Intervalometer", "UnleashedKit", "UnleashedSimulator", "UnleashedTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["CameraKit", "CommandCore", "unleashed", "Intervalometer", "UnleashedTestSupport"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
