// swift-tools-version: 6.1
// The benchmarks and the counts, a package of their own beside the main one so that the test
// build (`swift build --build-tests` at the top) compiles none of them. Each builds in release
// from the Makefile's `bench-*`, `counts` and `leak-check` targets.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "unleashed-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "unleashed", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "unleashed-bench",
            dependencies: [.product(name: "CameraKit", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed")],
            path: "unleashed-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-timing-bench",
            dependencies: [.product(name: "Intervalometer", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed")],
            path: "unleashed-timing-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-faults-bench",
            dependencies: [.product(name: "CameraKit", package: "unleashed"), .product(name: "Intervalometer", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed")],
            path: "unleashed-faults-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-bluez-bench",
            dependencies: [.product(name: "BlueZ", package: "unleashed"), .product(name: "DBus", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-bluez-bench",
            exclude: ["bleak-client.py"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-counts",
            dependencies: [.product(name: "BlueZ", package: "unleashed"), .product(name: "CameraKit", package: "unleashed"), .product(name: "DBus", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-counts",
            exclude: ["thresholds-6.3.json"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-gphoto2-bench",
            dependencies: [.product(name: "CameraKit", package: "unleashed"), .product(name: "GPhoto2", package: "unleashed"), .product(name: "PTPIPCamera", package: "unleashed"), .product(name: "Intervalometer", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-gphoto2-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-daemon-bench",
            dependencies: [.product(name: "DaemonClient", package: "unleashed"), .product(name: "UnleashedAPI", package: "unleashed"), .product(name: "Intervalometer", package: "unleashed"), .product(name: "FakeBlueZ", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-daemon-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-fleet-bench",
            dependencies: [.product(name: "Daemon", package: "unleashed"), .product(name: "FakeBlueZ", package: "unleashed"), .product(name: "MQTT", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-fleet-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-sync-bench",
            dependencies: [.product(name: "CameraKit", package: "unleashed"), .product(name: "CameraProtocols", package: "unleashed"), .product(name: "CameraRemote", package: "unleashed"), .product(name: "SimulatedCameras", package: "unleashed"), .product(name: "BlueZ", package: "unleashed"), .product(name: "DBus", package: "unleashed"), .product(name: "FakeBlueZ", package: "unleashed"), .product(name: "UnleashedKit", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-sync-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-ramp-bench",
            dependencies: [.product(name: "Intervalometer", package: "unleashed"), .product(name: "UnleashedProtocol", package: "unleashed"), .product(name: "UnleashedSimulator", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-ramp-bench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unleashed-dbus-soak",
            dependencies: [.product(name: "DBus", package: "unleashed"), .product(name: "UnleashedTestSupport", package: "unleashed")],
            path: "unleashed-dbus-soak",
            swiftSettings: strict
        ),
    ]
)
