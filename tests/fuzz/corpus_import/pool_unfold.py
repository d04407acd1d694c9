import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1):
        tmp_0 = torch.nn.functional.avg_pool2d(in_0, 2, 2, 0, True, False, None)
        tmp_1 = torch._C._nn.avg_pool2d(in_0, [3, 2], [], (1, 0), count_include_pad=True, divisor_override=4)
        tmp_2 = torch.nn.functional.pad(in_1, [2, 2, 2, 2]).unfold(2, 12, 8)
        tmp_3 = tmp_2.unfold(dimension = 3, size = 4, step = 4).reshape(1, 16, -1)
        return (tmp_0, tmp_1, tmp_3)
