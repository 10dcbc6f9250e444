defmodule Nxvk.OpsTest do
  # One test per op family, against values computed here in Elixir.
  use ExUnit.Case, async: true
  import Nxvk.TestHelpers

  defp t(list, opts \\ []), do: ok!(Nxvk.from_list(list, opts))
  defp list(tensor), do: ok!(Nxvk.to_list(tensor))

  test "from_list and to_list round-trip every dtype and shape" do
    for {data, type} <- [
          {[[1.5, -2.25], [0.0, 1.2676506002282294e30]], :f32},
          {[1.0e300, -1.0e-300], :f64},
          {[[[1, -2]], [[2_147_483_647, -2_147_483_648]]], :i32},
          {[0, 1, 255], :u8}
        ] do
      x = t(data, type: type)
      assert x.dtype == type
      assert list(x) == data
    end

    scalar = t(3.5)
    assert scalar.shape == {}
    assert list(scalar) == 3.5

    empty = ok!(Nxvk.from_binary(<<>>, :f32, {2, 0}))
    assert list(empty) == [[], []]
    assert t([1, 2]).dtype == :i32
  end

  test "binary elementwise ops, broadcasting and scalars" do
    a = for i <- 1..6, do: f32(i * 0.37 - 1.0)
    b = [f32(0.5), f32(-2.0), f32(3.25)]
    ta = t(Enum.chunk_every(a, 3))
    tb = t(b)
    bb = Stream.cycle(b) |> Enum.take(6)

    for {fun, ref} <- [
          {&Nxvk.add/2, &+/2},
          {&Nxvk.subtract/2, &-/2},
          {&Nxvk.multiply/2, &*/2},
          {&Nxvk.divide/2, &//2}
        ] do
      got = fun.(ta, tb) |> ok!() |> list() |> List.flatten()
      want = Enum.zip_with(a, bb, fn x, y -> f32(ref.(x, y)) end)
      # add, subtract, multiply are exact; divide within 2.5 ULP
      assert_close(got, want, 3.0e-7, 0.0)
    end

    got = Nxvk.max(ta, tb) |> ok!() |> list() |> List.flatten()
    assert got == Enum.zip_with(a, bb, &max/2)
    got = Nxvk.pow(tb, 2.0) |> ok!() |> list()
    assert_close(got, Enum.map(b, &(&1 * &1)))
    got = Nxvk.subtract(10, tb) |> ok!() |> list()
    assert got == Enum.map(b, &f32(10 - &1))

    ints = t([7, -7, 5])
    assert Nxvk.divide(ints, t([2, 2, 0])) |> ok!() |> list() == [3, -3, 0]
    assert Nxvk.remainder(ints, t([3, 3, 3])) |> ok!() |> list() == [1, -1, 2]
  end

  test "comparisons give u8 and select picks by them" do
    a = t([1.0, 2.0, :nan, 4.0])
    b = t([1.0, 3.0, :nan, 0.0])
    eq = ok!(Nxvk.equal(a, b))
    assert eq.dtype == :u8
    assert list(eq) == [1, 0, 0, 0]
    assert Nxvk.not_equal(a, b) |> ok!() |> list() == [0, 1, 1, 1]
    assert Nxvk.less(a, b) |> ok!() |> list() == [0, 1, 0, 0]
    assert Nxvk.greater_equal(a, b) |> ok!() |> list() == [1, 0, 0, 1]
    picked = Nxvk.select(ok!(Nxvk.less(a, b)), a, b) |> ok!() |> list()
    assert picked == [1.0, 2.0, :nan, 0.0]
  end

  test "unary ops" do
    xs = [0.25, 0.5, 1.0, 2.0, 3.5]
    x = t(xs)

    for {fun, ref} <- [
          {&Nxvk.exp/1, &:math.exp/1},
          {&Nxvk.log/1, &:math.log/1},
          {&Nxvk.sqrt/1, &:math.sqrt/1},
          {&Nxvk.tanh/1, &:math.tanh/1},
          {&Nxvk.sin/1, &:math.sin/1},
          {&Nxvk.cos/1, &:math.cos/1},
          {&Nxvk.sigmoid/1, &(1 / (1 + :math.exp(-&1)))},
          {&Nxvk.erf/1, &:math.erf/1}
        ] do
      assert_close(fun.(x) |> ok!() |> list(), Enum.map(xs, ref), 1.0e-5)
    end

    signed = t([-1.5, 0.0, 2.5])
    assert Nxvk.negate(signed) |> ok!() |> list() == [1.5, -0.0, -2.5]
    assert Nxvk.abs(signed) |> ok!() |> list() == [1.5, 0.0, 2.5]
    assert Nxvk.floor(signed) |> ok!() |> list() == [-2.0, 0.0, 2.0]
    assert Nxvk.ceil(signed) |> ok!() |> list() == [-1.0, 0.0, 3.0]
    assert Nxvk.round(signed) |> ok!() |> list() == [-2.0, 0.0, 3.0]
    assert Nxvk.sign(signed) |> ok!() |> list() == [-1.0, 0.0, 1.0]
  end

  test "reductions over axes, with keep_axes" do
    rows = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    x = t(rows)
    assert Nxvk.sum(x) |> ok!() |> list() == 21.0
    s = ok!(Nxvk.sum(x, axes: [1]))
    assert s.shape == {2}
    assert list(s) == [6.0, 15.0]
    k = ok!(Nxvk.sum(x, axes: [0], keep_axes: true))
    assert k.shape == {1, 3}
    assert list(k) == [[5.0, 7.0, 9.0]]
    assert Nxvk.product(x, axes: [0]) |> ok!() |> list() == [4.0, 10.0, 18.0]
    assert Nxvk.reduce_max(x, axes: [1]) |> ok!() |> list() == [3.0, 6.0]
    assert Nxvk.reduce_min(x) |> ok!() |> list() == 1.0
    assert Nxvk.mean(x, axes: [1]) |> ok!() |> list() == [2.0, 5.0]
    am = ok!(Nxvk.argmax(x, axes: [1]))
    assert am.dtype == :i32
    assert list(am) == [2, 2]
    assert Nxvk.argmin(t([3, 1, 2])) |> ok!() |> list() == 1
  end

  test "dot: matrix and batched" do
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    b = [[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]]

    want =
      for row <- a,
          do: for(col <- Enum.zip_with(b, & &1), do: Enum.sum(Enum.zip_with(row, col, &*/2)))

    c = ok!(Nxvk.dot(t(a), t(b)))
    assert c.shape == {2, 2}
    assert list(c) == want
    batched = ok!(Nxvk.dot(t([a, a]), t([b, b])))
    assert batched.shape == {2, 2, 2}
    assert list(batched) == [want, want]
  end

  test "movement: reshape, transpose, slice, concatenate, as_type" do
    x = ok!(Nxvk.iota({2, 3}, type: :f32))
    r = ok!(Nxvk.reshape(x, {3, -1}))
    assert r.shape == {3, 2}
    assert list(r) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert Nxvk.transpose(x) |> ok!() |> list() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]

    assert Nxvk.transpose(x, axes: [0, 1]) |> ok!() |> list() == [
             [0.0, 1.0, 2.0],
             [3.0, 4.0, 5.0]
           ]

    assert Nxvk.slice(x, [0, 1], [2, 2]) |> ok!() |> list() == [[1.0, 2.0], [4.0, 5.0]]
    assert Nxvk.slice(x, [0, 0], [1, 2], strides: [1, 2]) |> ok!() |> list() == [[0.0, 2.0]]

    assert Nxvk.concatenate([x, x], axis: 1) |> ok!() |> list() ==
             [[0.0, 1.0, 2.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]]

    i = ok!(Nxvk.as_type(t([1.7, -2.5, :nan]), :i32))
    assert i.dtype == :i32
    assert list(i) == [1, -2, 0]
    assert Nxvk.as_type(t([1, 2]), {:f, 64}) |> ok!() |> list() == [1.0, 2.0]
  end

  test "sources: iota along an axis, random uniform and normal" do
    assert Nxvk.iota({2, 3}, axis: 1) |> ok!() |> list() == [[0, 1, 2], [0, 1, 2]]
    u = ok!(Nxvk.random_uniform({1000}, seed: 42))
    us = list(u)
    assert u.dtype == :f32
    assert Enum.all?(us, &(&1 >= 0.0 and &1 < 1.0))
    assert_close(Enum.sum(us) / 1000, 0.5, 0.0, 0.05)
    # same seed, same numbers; another seed, others
    assert list(ok!(Nxvk.random_uniform({1000}, seed: 42))) == us
    refute list(ok!(Nxvk.random_uniform({1000}, seed: 43))) == us
    ns = list(ok!(Nxvk.random_normal({2000}, seed: 7, type: :f64)))
    mean = Enum.sum(ns) / 2000
    var = Enum.sum(Enum.map(ns, &((&1 - mean) * (&1 - mean)))) / 2000
    assert_close(mean, 0.0, 0.0, 0.1)
    assert_close(var, 1.0, 0.0, 0.15)
  end

  test "run_graph: handles, lists and bytes in, tensors and values out" do
    x = t([[1.0, 2.0], [3.0, 4.0]])

    graph = %{
      inputs: %{
        "x" => x,
        "y" => [10.0, 20.0],
        "z" => {:f32, {2}, <<1.0::float-32-little, 2.0::float-32-little>>}
      },
      ops: [
        %{op: "add", in: ["x", "y"], out: "s"},
        %{op: "multiply", in: ["s", "z"], out: "m"},
        %{op: "sum", in: ["m"], attrs: %{axes: [1]}, out: "total"}
      ],
      outputs: ["m", "total"]
    }

    outs = ok!(Nxvk.run_graph(graph))
    assert list(outs["m"]) == [[11.0, 44.0], [13.0, 48.0]]
    assert list(outs["total"]) == [55.0, 61.0]
    values = ok!(Nxvk.run_graph(graph, fetch: true, keep: false))
    assert values == %{"m" => [[11.0, 44.0], [13.0, 48.0]], "total" => [55.0, 61.0]}
    {tensor, value} = ok!(Nxvk.run_graph(graph, fetch: ["total"]))["total"]
    assert value == [55.0, 61.0]
    assert list(tensor) == value
  end

  test "a generic op by name with attributes" do
    x = t([[1.0, 2.0], [3.0, 4.0]])
    assert Nxvk.op("sum", [x], %{axes: [0]}) |> ok!() |> list() == [4.0, 6.0]
    info = ok!(Nxvk.Server.info())
    assert info["protocol"] == 1
    assert Enum.any?(info["ops"], &(&1["name"] == "dot"))
  end
end
