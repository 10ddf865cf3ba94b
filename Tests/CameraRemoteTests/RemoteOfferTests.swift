import CameraKit
import CameraRemote
import Testing

@Suite struct RemoteOfferTests {
    /// A refusal names the operation, the brand and what its remote does offer, so that the
    /// person knows what is possible instead.
    @Test func refusalNamesWhatTheRemoteOffers() {
        let error = RemoteOffer.refusal("bulb", brand: .nikon, offers: [.shoot])
        #expect(error.description == "bulb is not offered by a Nikon camera's Bluetooth remote; it offers: shoot")
        #expect(error.kind == .refused)
        #expect(RemoteOffer.names([.shoot, .focus, .video, .geotag]) == ["shoot", "focus", "video", "geotag"])
    }
}
