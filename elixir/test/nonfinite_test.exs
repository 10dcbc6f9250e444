defmodule Nxvk.NonFiniteTest do
  # NaN and the infinities cross the port as bits and come back as the atoms
  # :nan, :infinity and :neg_infinity, never dropped.
  use ExUnit.Case, async: true
  import Nxvk.TestHelpers

  @specials [:nan, :infinity, :neg_infinity]

  test "the idiomatic float comprehension drops non-finite values; our decoder keeps them" do
    bin =
      <<1.0::float-32-little>> <>
        Nxvk.Tensor.encode([:nan, :infinity, :neg_infinity], :f32) <>
        <<2.0::float-32-little>>

    # what a reader of the binary gets from the usual comprehension: a float
    # segment does not match NaN/inf bits, and a binary generator stops at
    # the first segment that does not match, silently: everything from the
    # first NaN on is gone, with no error
    dropped = for <<x::float-32-little <- bin>>, do: x
    assert dropped == [1.0]

    assert Nxvk.Tensor.decode(bin, :f32) == [1.0, :nan, :infinity, :neg_infinity, 2.0]
  end

  for dtype <- [:f32, :f64] do
    test "#{dtype} specials survive a round trip through the device" do
      values = [1.5, :nan, -0.0, :infinity, :neg_infinity, 0.0]
      x = ok!(Nxvk.from_list(values, type: unquote(dtype)))
      assert ok!(Nxvk.to_list(x)) == values
      # the bytes themselves, not only our reading of them
      size = Nxvk.Tensor.dtype_size(unquote(dtype))
      assert byte_size(ok!(Nxvk.to_binary(x))) == length(values) * size
    end
  end

  test "specials made on the device: 1/0, -1/0, 0/0, log 0, sqrt -1" do
    x = ok!(Nxvk.from_list([1.0, -1.0, 0.0]))

    assert Nxvk.divide(x, 0.0) |> ok!() |> Nxvk.to_list() |> ok!() == [
             :infinity,
             :neg_infinity,
             :nan
           ]

    assert Nxvk.log(x) |> ok!() |> Nxvk.to_list() |> ok!() |> Enum.at(2) == :neg_infinity
    assert Nxvk.sqrt(x) |> ok!() |> Nxvk.to_list() |> ok!() |> Enum.at(1) == :nan
  end

  test "every NaN payload and sign reads as :nan" do
    nans = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF]
    bin = for n <- nans, into: <<>>, do: <<n::unsigned-32-little>>
    assert Nxvk.Tensor.decode(bin, :f32) == List.duplicate(:nan, 5)
    x = ok!(Nxvk.from_binary(bin, :f32, {5}))
    assert ok!(Nxvk.to_list(x)) == List.duplicate(:nan, 5)
  end

  test "specials as scalars and in graph inputs" do
    x = ok!(Nxvk.from_list([1.0, 2.0]))
    assert Nxvk.add(x, :infinity) |> ok!() |> Nxvk.to_list() |> ok!() == [:infinity, :infinity]

    out =
      ok!(
        Nxvk.run_graph(
          %{
            inputs: %{"a" => x, "b" => @specials |> Enum.take(2)},
            ops: [%{op: "multiply", in: ["a", "b"], out: "p"}],
            outputs: ["p"]
          },
          fetch: true,
          keep: false
        )
      )

    assert out["p"] == [:nan, :infinity]
  end
end
