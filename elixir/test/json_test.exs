defmodule Nxvk.JSONTest do
  use ExUnit.Case, async: true
  alias Nxvk.JSON

  test "decodes what the port sends" do
    text =
      ~s({"id":7,"ok":true,"shape":[2,3],"x":-1.5e-3,"s":"a\\"b\\\\c\\u00e9\\ud83d\\ude00","n":null,"f":false})

    assert {:ok, m} = JSON.decode(text)

    assert m == %{
             "id" => 7,
             "ok" => true,
             "shape" => [2, 3],
             "x" => -0.0015,
             "s" => "a\"b\\cé😀",
             "n" => nil,
             "f" => false
           }

    assert JSON.decode(" [ ] ") == {:ok, []}
    assert JSON.decode("{}") == {:ok, %{}}
  end

  test "refuses what is not JSON" do
    for bad <- ["", "{", "[1,]", ~s({"a" 1}), ~s("abc), "tru", "1 2", ~s({"a":1,}), "\"\\x\""] do
      assert {:error, _} = JSON.decode(bad), inspect(bad)
    end
  end

  test "encodes maps, ordered objects, lists, strings and numbers; reads them back" do
    term = %{"a" => [1, 2.5, -0.0, nil, true], "b" => "q\"\n\u0001", :c => %{}}

    assert JSON.decode(JSON.encode!(term)) ==
             {:ok, %{"a" => [1, 2.5, -0.0, nil, true], "b" => "q\"\n\u0001", "c" => %{}}}

    assert JSON.encode!({:object, [{"z", 1}, {"a", 2}]}) == ~s({"z":1,"a":2})
    assert JSON.encode!(:f32) == ~s("f32")
  end
end
