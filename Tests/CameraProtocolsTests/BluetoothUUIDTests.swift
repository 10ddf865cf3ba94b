import CameraProtocols
import GATT
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func shortFormsExpandOnTheBaseUUID() {
        #expect(BluetoothUUID.normalized("FEA6") == "0000fea6-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.normalized("0000FEA6") == "0000fea6-0000-1000-8000-00805f9b34fb")
        #expect(GATTCharacteristicID(service: "FEA6", characteristic: "B5F90072-AA8D-11E3-9046-0002A5D5C51B")
            == GATTCharacteristicID(service: "0000fea6-0000-1000-8000-00805f9b34fb", characteristic: "b5f90072-aa8d-11e3-9046-0002a5d5c51b"))
    }

    @Test func attErrorsPrintTheirCode() {
        #expect(ATTError(0x90).description == "ATT error 0x90")
        #expect(ATTError.readNotPermitted.description == "ATT error 0x02")
    }
}
